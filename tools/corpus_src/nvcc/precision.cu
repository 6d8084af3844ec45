// Corpus: double, half and bfloat16 arithmetic, conversions, math library calls.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void double_math(const double *x, double *y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double v = x[i];
    y[i] = sqrt(fabs(v)) + exp(-v * v) / (1.0 + v * v) + log1p(fabs(v)) + rsqrt(1.0 + fabs(v))
           + sin(v) * cos(v) + fma(v, 0.5, 0.25) + pow(fabs(v), 1.5);
}

__global__ void half2_axpy(__half2 *y, const __half2 *x, __half2 a, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma2(a, x[i], y[i]);
}

__global__ void half_activations(const __half *x, __half *y, float *acc, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const __half v = x[i];
    const __half r = __hgt(v, __float2half(0.0f)) ? v : __hmul(v, __float2half(0.01f));
    y[i] = r;
    atomicAdd(acc, __half2float(r));
}

__global__ void bf16_dot(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *out, int n)
{
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += __bfloat162float(a[i]) * __bfloat162float(b[i]);
    atomicAdd(out, s);
}

__global__ void conversions(const float *f, int *i32, long long *i64, unsigned short *u16,
                            double *d, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = f[i];
    i32[i] = __float2int_rn(v) + __float2int_rz(v) + (int)rintf(v);
    i64[i] = __double2ll_rd((double)v * 1e6);
    u16[i] = __half_as_ushort(__float2half_rn(v));
    d[i] = (double)__fdividef(v, 3.0f) + __int_as_float(0x3f800000) + (double)__saturatef(v);
}
