// Warpline validation suite v2, family "half": packed half-precision (__half2) arithmetic.
//   h2_axpy      : y = a*x + y over n2 __half2 values (HFMA2, memory-bound)
//   h2_fma_chain : four independent __half2 FMA chains of `iters` steps per thread (HFMA2-bound)
// Inputs: x / y / data uniform random halves in [0, 1).
#include <cuda_fp16.h>

__global__ void h2_axpy(const __half2 *__restrict__ x, __half2 *__restrict__ y, float a, int n2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2)
        y[i] = __hfma2(__float2half2_rn(a), x[i], y[i]);
}

__global__ void h2_fma_chain(__half2 *__restrict__ data, int n2, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2)
        return;
    const __half2 a = __float2half2_rn(0.999f);
    const __half2 b = __float2half2_rn(0.001f);
    __half2 v0 = data[i];
    __half2 v1 = __hmul2(v0, __float2half2_rn(0.5f));
    __half2 v2 = __hadd2(v0, b);
    __half2 v3 = __hsub2(v0, b);
    for (int k = 0; k < iters; ++k) {
        v0 = __hfma2(v0, a, b);
        v1 = __hfma2(v1, a, b);
        v2 = __hfma2(v2, a, b);
        v3 = __hfma2(v3, a, b);
    }
    data[i] = __hadd2(__hadd2(v0, v1), __hadd2(v2, v3));
}
