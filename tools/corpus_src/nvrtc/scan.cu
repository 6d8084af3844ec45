// Corpus (NVRTC): work-efficient exclusive scan of one block (up-sweep / down-sweep).
extern "C" __global__ void block_exclusive_scan(const unsigned *in, unsigned *out, unsigned *sums, int n)
{
    __shared__ unsigned s[1024];
    const int t = threadIdx.x;
    const int base = blockIdx.x * 1024;
    s[2 * t] = base + 2 * t < n ? in[base + 2 * t] : 0u;
    s[2 * t + 1] = base + 2 * t + 1 < n ? in[base + 2 * t + 1] : 0u;
    int off = 1;
    for (int d = 512; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            const int a = off * (2 * t + 1) - 1, b = off * (2 * t + 2) - 1;
            s[b] += s[a];
        }
        off <<= 1;
    }
    if (t == 0) { sums[blockIdx.x] = s[1023]; s[1023] = 0u; }
    for (int d = 1; d < 1024; d <<= 1) {
        off >>= 1;
        __syncthreads();
        if (t < d) {
            const int a = off * (2 * t + 1) - 1, b = off * (2 * t + 2) - 1;
            const unsigned v = s[a];
            s[a] = s[b];
            s[b] += v;
        }
    }
    __syncthreads();
    if (base + 2 * t < n) out[base + 2 * t] = s[2 * t];
    if (base + 2 * t + 1 < n) out[base + 2 * t + 1] = s[2 * t + 1];
}
