// Warpline validation suite v2, family "localarray": small per-thread arrays indexed at run time
// (the compiler places them in local memory).
//   local_sort8  : each thread loads 8 values (in[k*n + i], coalesced), insertion-sorts them in
//                  a local array, and writes a trimmed statistic
//   local_hist16 : each thread counts the low and next nibble of `per_thread` values into a
//                  16-entry int array, then writes a weighted sum of the counts
// Inputs: in uniform random floats / unsigned ints; out floats.

__global__ void local_sort8(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        v[k] = in[(long long)k * n + i];
    for (int a = 1; a < 8; ++a) {
        const float key = v[a];
        int b = a - 1;
        while (b >= 0 && v[b] > key) {
            v[b + 1] = v[b];
            --b;
        }
        v[b + 1] = key;
    }
    out[i] = v[3] + v[4] + 0.01f * (v[7] - v[0]);
}

__global__ void local_hist16(const unsigned *__restrict__ in, float *__restrict__ out, int n, int per_thread)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int h[16];
#pragma unroll
    for (int k = 0; k < 16; ++k)
        h[k] = 0;
    for (int k = 0; k < per_thread; ++k) {
        const unsigned v = in[(long long)k * n + i];
        h[v & 15u] += 1;
        h[(v >> 4) & 15u] += 1;
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 16; ++k)
        s += (float)(h[k] * (k + 1));
    out[i] = s;
}
