// Corpus: control flow shapes (switch, nested/early-exit loops, divergence,
// 64-bit integer math, assert and trap).
#include <cassert>

__global__ void opcode_interpreter(const int *prog, int len, const float *in, float *out, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float acc = in[t], reg = 1.0f;
    for (int pc = 0; pc < len; ++pc) {
        switch (prog[pc]) {
        case 0: acc += reg; break;
        case 1: acc *= reg; break;
        case 2: reg = acc; break;
        case 3: acc = -acc; break;
        case 4: reg += 1.0f; break;
        case 5: if (acc > 1e6f) pc = len; break;
        case 6: acc = sqrtf(fabsf(acc)); break;
        default: acc = 0.0f; break;
        }
    }
    out[t] = acc;
}

__global__ void collatz_steps(const unsigned long long *start, int *steps, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned long long v = start[t];
    int s = 0;
    while (v != 1ull && s < 10000) {
        v = (v & 1ull) ? 3ull * v + 1ull : v >> 1;
        ++s;
    }
    assert(s < 10000);
    steps[t] = s;
}

__global__ void search_2d(const int *grid, int rows, int cols, int key, int *found)
{
    const int r0 = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = r0; r < rows; r += gridDim.x * blockDim.x) {
        for (int c = 0; c < cols; ++c) {
            if (grid[r * cols + c] == key) {
                found[0] = r;
                found[1] = c;
                goto done;
            }
            if (grid[r * cols + c] < 0)
                break;
        }
    }
done:
    if (r0 == 0 && key < 0)
        __trap();
}

__global__ void int64_mix(const long long *a, const long long *b, long long *q, unsigned long long *h, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const long long d = b[i] == 0 ? 1 : b[i];
    q[i] = a[i] / d + a[i] % d;
    unsigned long long x = (unsigned long long)a[i] * 0x9e3779b97f4a7c15ull;
    x ^= x >> 31;
    h[i] = __umul64hi(x, 0xbf58476d1ce4e5b9ull) + __clzll(x) + __popcll(x);
}
