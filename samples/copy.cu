// Warpline sample: global-memory access-pattern probes.
//   offset_copy : dst[i] = src[i + offset]; a non-zero offset misaligns each
//                 warp's 128-byte segment, costing an extra transaction.
//   stride_copy : dst[i] = src[i * stride]; larger strides spread a warp's reads
//                 over more segments until every thread needs its own.
// The source buffer must hold n + offset (resp. n * stride) elements.

__global__ void offset_copy(float *dst, const float *src, int n, int offset)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i + offset];
}

__global__ void stride_copy(float *dst, const float *src, int n, int stride)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[(long long)i * stride];
}
