// Warpline validation suite v2x (tuning supplement), family "texfetch": 1D texture objects over
// linear memory (tex1Dfetch, point sampling).
//   tex1d_scale    : out[i] = a * t[i] (one texel per thread, streaming)
//   tex1d_gather   : out[i] = t[idx[i]] (random texel indices read from an int array)
//   tex1d_stencil3 : out[i] = 0.25 t[i-1] + 0.5 t[i] + 0.25 t[i+1] (neighbours shared by lanes)
// Inputs: the texture's buffer uniform random floats; idx uniform random ints in [0, n); out floats.

__global__ void tex1d_scale(cudaTextureObject_t t, float *__restrict__ out, int n, float a)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * tex1Dfetch<float>(t, i);
}

__global__ void tex1d_gather(cudaTextureObject_t t, const int *__restrict__ idx, float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex1Dfetch<float>(t, idx[i]);
}

__global__ void tex1d_stencil3(cudaTextureObject_t t, float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 0.25f * tex1Dfetch<float>(t, i - 1) + 0.5f * tex1Dfetch<float>(t, i)
                 + 0.25f * tex1Dfetch<float>(t, i + 1);
}
