// Warpline validation suite v2, family "gather": reads through index arrays.
//   gather_f32       : out[i] = src[idx[i]]; launched once with uniformly random indices and
//                      once with the same indices sorted (the launch name says which)
//   embedding_gather : embedding-table lookup: output row r (dim floats) is table row idx[r];
//                      threadIdx.y picks the row, threadIdx.x walks its dim columns
// Inputs: src / table uniform random floats, idx ints in range, out floats.

__global__ void gather_f32(const float *__restrict__ src, const int *__restrict__ idx,
                           float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = src[idx[i]];
}

__global__ void embedding_gather(const float *__restrict__ table, const int *__restrict__ idx,
                                 float *__restrict__ out, int nrows, int dim)
{
    const int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= nrows)
        return;
    const float *from = table + (long long)idx[r] * dim;
    float *to = out + (long long)r * dim;
    for (int c = threadIdx.x; c < dim; c += blockDim.x)
        to[c] = from[c];
}
