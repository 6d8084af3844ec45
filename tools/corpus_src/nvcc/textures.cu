// Corpus: texture and surface objects.
__global__ void bilinear_resample(cudaTextureObject_t tex, float *out, int w, int h, float sx, float sy)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    out[y * w + x] = tex2D<float>(tex, (x + 0.5f) * sx, (y + 0.5f) * sy);
}

__global__ void fetch_1d(cudaTextureObject_t tex, float4 *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float4>(tex, i);
}

__global__ void layered_lod(cudaTextureObject_t tex, float *out, int n, float lod)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayeredLod<float>(tex, 0.25f * i, 0.5f, i & 3, lod);
}

__global__ void surface_invert(cudaSurfaceObject_t surf, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    uchar4 p;
    surf2Dread(&p, surf, x * (int)sizeof(uchar4), y);
    p = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
    surf2Dwrite(p, surf, x * (int)sizeof(uchar4), y);
}
