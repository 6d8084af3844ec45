// Corpus (NVRTC): half precision through inline PTX (NVRTC has no CUDA headers
// here), double atomics with a CAS fallback, non-inlined helpers.
__device__ __forceinline__ float half_bits_to_float(unsigned short h)
{
    float f;
    asm("{ .reg .f16 tmp;\n\t mov.b16 tmp, %1;\n\t cvt.f32.f16 %0, tmp; }" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ unsigned short float_to_half_bits(float f)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

__device__ __noinline__ double atomic_add_f64(double *addr, double v)
{
#if __CUDA_ARCH__ >= 600
    return atomicAdd(addr, v);
#else
    unsigned long long *p = (unsigned long long *)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(v + __longlong_as_double(assumed)));
    } while (assumed != old);
    return __longlong_as_double(old);
#endif
}

__device__ __noinline__ float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

extern "C" __global__ void gelu_half(const unsigned short *x, unsigned short *y, double *checksum, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float g = gelu(half_bits_to_float(x[i]));
    y[i] = float_to_half_bits(g);
    atomic_add_f64(checksum, (double)g);
}
