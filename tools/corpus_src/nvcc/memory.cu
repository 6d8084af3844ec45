// Corpus: vector loads/stores, read-only loads, dynamic shared memory, local arrays,
// constant memory, async copies.
#include <cuda_pipeline.h>

__constant__ float c_weights[64];

__global__ void saxpy4(float4 *y, const float4 *__restrict__ x, float a, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    const float4 xv = __ldg(x + i);
    float4 yv = y[i];
    yv.x += a * xv.x; yv.y += a * xv.y; yv.z += a * xv.z; yv.w += a * xv.w;
    y[i] = yv;
}

__global__ void gather_pairs(const int2 *pairs, const double *vals, double2 *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int2 p = pairs[i];
    out[i] = make_double2(vals[p.x], vals[p.y]);
}

__global__ void dyn_smem_stencil(const float *in, float *out, int n)
{
    extern __shared__ float halo[];              // blockDim.x + 2 * 4 floats
    const int r = 4;
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const int l = threadIdx.x + r;
    halo[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < r) {
        halo[l - r] = g >= r ? in[g - r] : 0.0f;
        const int h = g + blockDim.x;
        halo[l + blockDim.x] = h < n ? in[h] : 0.0f;
    }
    __syncthreads();
    float s = 0.0f;
    for (int k = -r; k <= r; ++k)
        s += c_weights[k + r] * halo[l + k];
    if (g < n) out[g] = s;
}

__global__ void local_sort8(const int *in, int *out)
{
    int v[8];                                    // indexed dynamically -> local memory
    const int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    for (int k = 0; k < 8; ++k) v[k] = in[base + k];
    for (int a = 1; a < 8; ++a) {
        const int key = v[a];
        int b = a - 1;
        while (b >= 0 && v[b] > key) { v[b + 1] = v[b]; --b; }
        v[b + 1] = key;
    }
    for (int k = 0; k < 8; ++k) out[base + k] = v[k];
}

__global__ void async_stage(const float4 *in, float4 *out, int n4)
{
    __shared__ float4 stage[2][128];
    const int t = threadIdx.x;
    int buf = 0;
    int i = blockIdx.x * 128 + t;
    if (i < n4) __pipeline_memcpy_async(&stage[buf][t], &in[i], sizeof(float4));
    __pipeline_commit();
    for (; i < n4; i += gridDim.x * 128) {
        const int nxt = i + gridDim.x * 128;
        if (nxt < n4) __pipeline_memcpy_async(&stage[buf ^ 1][t], &in[nxt], sizeof(float4));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        float4 v = stage[buf][t];
        v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;
        out[i] = v;
        buf ^= 1;
    }
}
