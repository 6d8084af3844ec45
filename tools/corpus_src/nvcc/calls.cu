// Corpus: non-inlined device functions calling each other, recursion, printf.
#include <cstdio>

__device__ __noinline__ float clamp_unit(float v)
{
    return fminf(fmaxf(v, 0.0f), 1.0f);
}

__device__ __noinline__ float smoothstep3(float lo, float hi, float x)
{
    const float t = clamp_unit((x - lo) / (hi - lo));
    return t * t * (3.0f - 2.0f * t);
}

// Returns two values through a struct (a .param .align aggregate in PTX).
struct MinMax { float lo, hi; };

__device__ __noinline__ MinMax window_range(const float *v, int n)
{
    MinMax r{v[0], v[0]};
    for (int i = 1; i < n; ++i) {
        r.lo = fminf(r.lo, v[i]);
        r.hi = fmaxf(r.hi, v[i]);
    }
    return r;
}

// Genuine recursion: depth-limited binary partition sum.
__device__ __noinline__ int tree_sum(const int *v, int lo, int hi)
{
    if (hi - lo <= 2) {
        int s = 0;
        for (int i = lo; i < hi; ++i) s += v[i];
        return s;
    }
    const int mid = (lo + hi) / 2;
    return tree_sum(v, lo, mid) + tree_sum(v, mid, hi);
}

__device__ __noinline__ unsigned gcd_rec(unsigned a, unsigned b)
{
    return b == 0 ? a : gcd_rec(b, a % b);
}

__global__ void normalise_windows(const float *in, float *out, int n, int win)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + win > n) return;
    const MinMax r = window_range(in + i, win);
    out[i] = smoothstep3(r.lo, r.hi, in[i]);
}

__global__ void recursive_sums(const int *v, int *sums, int chunk, unsigned *g)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    sums[t] = tree_sum(v, t * chunk, (t + 1) * chunk);
    g[t] = gcd_rec((unsigned)sums[t], (unsigned)chunk);
}

__global__ void report(const float *v, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && v[i] < 0.0f)
        printf("block %d thread %d: negative value %f at %d\n", blockIdx.x, threadIdx.x, v[i], i);
    if (i == 0)
        printf("checked %d values\n", n);
}
