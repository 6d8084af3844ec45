// Warpline validation suite v2, family "readonly": the read-only data path and texture objects.
//   ldg_window     : 1D box filter of radius `radius` (clamped at the ends), every tap read
//                    with __ldg (LDG through the read-only/texture cache)
//   tex1d_window   : the same filter reading a linear-memory 1D texture object (tex1Dfetch)
//   tex2d_bilinear : resampling: out(x, y) = bilinear sample of a 2D pitched texture at
//                    (x*sx + ox, y*sy + oy), unnormalised coordinates, clamp addressing
// Inputs: in / texture data uniform random floats; out floats.

__global__ void ldg_window(const float *__restrict__ in, float *__restrict__ out, int n, int radius)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = -radius; k <= radius; ++k) {
        const int j = min(max(i + k, 0), n - 1);
        acc += __ldg(&in[j]);
    }
    out[i] = acc / (float)(2 * radius + 1);
}

__global__ void tex1d_window(cudaTextureObject_t tex, float *__restrict__ out, int n, int radius)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = -radius; k <= radius; ++k) {
        const int j = min(max(i + k, 0), n - 1);
        acc += tex1Dfetch<float>(tex, j);
    }
    out[i] = acc / (float)(2 * radius + 1);
}

__global__ void tex2d_bilinear(cudaTextureObject_t tex, float *__restrict__ out, int w, int h,
                               float sx, float sy, float ox, float oy)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    out[(long long)y * w + x] = tex2D<float>(tex, x * sx + ox, y * sy + oy);
}
