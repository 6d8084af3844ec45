// Warpline validation suite v3, family "scansort": scans and sorts as libraries build them.
//   scan_block_blelloch : work-efficient exclusive scan (up-sweep, down-sweep) of the 2 * blockDim.x
//                         elements of each block in shared memory, with one padding word every 32
//                         to avoid bank conflicts; block totals go to sums for the next level.
//                         Dynamic shared memory: (2 B + 2 B / 32) floats.
//   radix_local_4bit    : local pass of an LSD radix sort: each block sorts its blockDim.x keys by
//                         the 4-bit digit at `shift` with four 1-bit splits (warp ballots, the warps'
//                         counts scanned by warp 0), then writes the keys in that order and the
//                         block's 16 digit counts (counts[digit * gridDim.x + block]) for the global
//                         scatter. Dynamic shared memory: blockDim.x keys.
//   bitonic_step        : one compare-exchange step (j, k) of a bitonic sort over the whole array,
//                         in place; the lower index of each pair does the work and writes both
//                         elements (min / max by direction)
//   bitonic_sort_block  : a complete bitonic sort of each block's blockDim.x elements in shared
//                         memory (a barrier after every step). Dynamic shared memory: blockDim.x floats.
// Inputs: uniform random floats and keys.

#include <cfloat>

#define SCAN_PAD(i) ((i) >> 5)

__global__ void scan_block_blelloch(const float *__restrict__ in, float *__restrict__ out, float *__restrict__ sums,
                                    int n)
{
    extern __shared__ float t[];
    const int tid = threadIdx.x;
    const int m = 2 * blockDim.x;
    const size_t base = (size_t)blockIdx.x * m;
    const int ai = tid, bi = tid + blockDim.x;
    t[ai + SCAN_PAD(ai)] = (base + ai < (size_t)n) ? in[base + ai] : 0.0f;
    t[bi + SCAN_PAD(bi)] = (base + bi < (size_t)n) ? in[base + bi] : 0.0f;
    int offset = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (tid < d) {
            int a = offset * (2 * tid + 1) - 1;
            int b = offset * (2 * tid + 2) - 1;
            a += SCAN_PAD(a);
            b += SCAN_PAD(b);
            t[b] += t[a];
        }
        offset <<= 1;
    }
    if (tid == 0) {
        const int last = m - 1 + SCAN_PAD(m - 1);
        sums[blockIdx.x] = t[last];
        t[last] = 0.0f;
    }
    for (int d = 1; d < m; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int a = offset * (2 * tid + 1) - 1;
            int b = offset * (2 * tid + 2) - 1;
            a += SCAN_PAD(a);
            b += SCAN_PAD(b);
            const float left = t[a];
            t[a] = t[b];
            t[b] += left;
        }
    }
    __syncthreads();
    if (base + ai < (size_t)n)
        out[base + ai] = t[ai + SCAN_PAD(ai)];
    if (base + bi < (size_t)n)
        out[base + bi] = t[bi + SCAN_PAD(bi)];
}

__global__ void radix_local_4bit(const unsigned *__restrict__ keys_in, unsigned *__restrict__ keys_out,
                                 unsigned *__restrict__ counts, int n, int shift)
{
    extern __shared__ unsigned sorted[];
    __shared__ unsigned warp_zeros[32];
    __shared__ unsigned digit_count[16];
    __shared__ unsigned block_zeros;
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int nwarps = blockDim.x >> 5;
    const int i = blockIdx.x * blockDim.x + tid;
    unsigned key = (i < n) ? keys_in[i] : 0xffffffffu;
    if (tid < 16)
        digit_count[tid] = 0;
    for (int bit = 0; bit < 4; ++bit) {
        const bool zero = ((key >> (shift + bit)) & 1u) == 0;
        const unsigned ballot = __ballot_sync(0xffffffffu, zero);
        const unsigned zeros_before = __popc(ballot & ((1u << lane) - 1u));
        if (lane == 0)
            warp_zeros[warp] = __popc(ballot);
        __syncthreads();
        if (warp == 0) {
            // exclusive scan of the warps' zero counts; lane nwarps - 1 ends with the total
            const unsigned mine = lane < nwarps ? warp_zeros[lane] : 0u;
            unsigned incl = mine;
            for (int d = 1; d < 32; d <<= 1) {
                const unsigned v = __shfl_up_sync(0xffffffffu, incl, d);
                if (lane >= d)
                    incl += v;
            }
            if (lane < nwarps)
                warp_zeros[lane] = incl - mine;
            if (lane == 31)
                block_zeros = incl;
        }
        __syncthreads();
        const unsigned total_zeros = block_zeros;
        const unsigned zeros_left = warp_zeros[warp] + zeros_before;
        const unsigned pos = zero ? zeros_left : total_zeros + (tid - zeros_left);
        sorted[pos] = key;
        __syncthreads();
        key = sorted[tid];
        __syncthreads();
    }
    if (i < n)
        atomicAdd(&digit_count[(key >> shift) & 15u], 1u);
    if (i < n)
        keys_out[i] = key;
    __syncthreads();
    if (tid < 16)
        counts[tid * gridDim.x + blockIdx.x] = digit_count[tid];
}

__global__ void bitonic_step(float *data, int j, int k)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned partner = i ^ (unsigned)j;
    if (partner > i) {
        const float a = data[i], b = data[partner];
        const float lo = fminf(a, b), hi = fmaxf(a, b);
        const bool ascending = (i & (unsigned)k) == 0;
        data[i] = ascending ? lo : hi;
        data[partner] = ascending ? hi : lo;
    }
}

__global__ void bitonic_sort_block(const float *__restrict__ in, float *__restrict__ out, int n)
{
    extern __shared__ float s[];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? in[i] : FLT_MAX;
    __syncthreads();
    for (unsigned k = 2; k <= blockDim.x; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            const unsigned partner = tid ^ j;
            if (partner > tid) {
                const float a = s[tid], b = s[partner];
                const bool ascending = (tid & k) == 0;
                if ((a > b) == ascending) {
                    s[tid] = b;
                    s[partner] = a;
                }
            }
            __syncthreads();
        }
    }
    if (i < n)
        out[i] = s[tid];
}
