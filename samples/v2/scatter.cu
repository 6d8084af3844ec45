// Warpline validation suite v2, family "scatter": scattered and partial-sector stores.
//   scatter_perm  : out[perm[i]] = src[i] * scale with perm a random permutation of 0..n-1
//                   (every store lands in a different sector)
//   store_stride2 : out[2*i] = f(i): a warp writes every other float, so each 32-byte sector
//                   is only half written (partial-sector stores)
// Inputs: src uniform random floats, perm a permutation, out floats (2n for store_stride2).

__global__ void scatter_perm(const float *__restrict__ src, const int *__restrict__ perm,
                             float *__restrict__ out, int n, float scale)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[perm[i]] = src[i] * scale;
}

__global__ void store_stride2(float *__restrict__ out, int n, float scale)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[2 * (long long)i] = scale * (float)(i & 1023) + 1.0f;
}
