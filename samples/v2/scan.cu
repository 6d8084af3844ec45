// Warpline validation suite v2, family "scan": inclusive prefix sums.
//   scan_block    : each block scans its blockDim.x elements (warp shuffles, then the warp
//                   totals in shared memory) and writes its total to block_sums[blockIdx.x]
//   scan_partials : ONE block scans count values in place, blockDim.x at a time, carrying the
//                   running total (the serial middle step of a three-phase scan)
// Inputs: in uniform random floats; out floats; block_sums / sums floats.

__device__ __forceinline__ float warp_inclusive_scan(float v)
{
    const int lane = threadIdx.x & 31;
    for (int offset = 1; offset < 32; offset <<= 1) {
        const float t = __shfl_up_sync(0xffffffffu, v, offset);
        if (lane >= offset)
            v += t;
    }
    return v;
}

__global__ void scan_block(const float *__restrict__ in, float *__restrict__ out,
                           float *__restrict__ block_sums, int n)
{
    __shared__ float warp_total[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    float v = i < n ? in[i] : 0.0f;
    v = warp_inclusive_scan(v);
    if (lane == 31)
        warp_total[warp] = v;
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        float t = lane < warps ? warp_total[lane] : 0.0f;
        t = warp_inclusive_scan(t);
        if (lane < warps)
            warp_total[lane] = t;
    }
    __syncthreads();
    if (warp > 0)
        v += warp_total[warp - 1];
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}

__global__ void scan_partials(float *sums, int count)
{
    __shared__ float warp_total[32];
    __shared__ float carry;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0)
        carry = 0.0f;
    __syncthreads();
    for (int base = 0; base < count; base += blockDim.x) {
        const int i = base + threadIdx.x;
        float v = i < count ? sums[i] : 0.0f;
        v = warp_inclusive_scan(v);
        if (lane == 31)
            warp_total[warp] = v;
        __syncthreads();
        if (warp == 0) {
            const int warps = blockDim.x >> 5;
            float t = lane < warps ? warp_total[lane] : 0.0f;
            t = warp_inclusive_scan(t);
            if (lane < warps)
                warp_total[lane] = t;
        }
        __syncthreads();
        if (warp > 0)
            v += warp_total[warp - 1];
        v += carry;
        if (i < count)
            sums[i] = v;
        __syncthreads();
        if (threadIdx.x == blockDim.x - 1)
            carry = v;
        __syncthreads();
    }
}
