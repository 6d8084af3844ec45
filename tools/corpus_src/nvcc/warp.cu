// Corpus: warp intrinsics (shuffles with predicate outputs, votes, match, bit ops).
__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

__global__ void warp_reductions(const float *in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(out, v);
}

__global__ void warp_scan(const int *in, int *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    int v = i < n ? in[i] : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    const int total = __shfl_sync(0xffffffffu, v, 31);
    const int mirrored = __shfl_xor_sync(0xffffffffu, v, 16);
    if (i < n) out[i] = v + (total ^ mirrored);
}

__global__ void warp_votes(const int *flags, unsigned *masks, int *counts, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int f = i < n ? flags[i] : 0;
    const unsigned active = __activemask();
    const unsigned ballot = __ballot_sync(active, f > 0);
    const int any = __any_sync(active, f < 0);
    const int all = __all_sync(active, f != 0);
    const unsigned same = __match_any_sync(active, f);
    if ((threadIdx.x & 31) == 0) {
        masks[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = ballot ^ same;
        counts[blockIdx.x] = __popc(ballot) + any * 100 + all * 1000 + __clz(same) + __ffs(ballot);
    }
#if __CUDA_ARCH__ >= 800
    const unsigned r = __reduce_add_sync(active, (unsigned)f);
    if (i < n) masks[n + i] = r;
#endif
    __syncwarp();
}

__global__ void bit_tricks(const unsigned *in, unsigned *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned x = in[i];
    out[i] = __brev(x) ^ __byte_perm(x, 0, 0x0123) ^ (unsigned)__popc(x) ^ __funnelshift_l(x, x, 7)
             ^ __umulhi(x, 0x9e3779b9u) ^ __sad(x, 3u, 1u);
}
