// Warpline validation suite v2, family "sfu": transcendental-heavy kernels.
//   sfu_fast_sincos : `iters` rounds of the hardware approximations __sinf / __cosf (MUFU)
//   sin_precise     : `iters` rounds of the accurate sinf on arguments up to 2e5 in magnitude;
//                     arguments above about 1e5 take the slow (Payne-Hanek, local-memory) path,
//                     so lanes diverge between the two paths
// Inputs: in uniform random floats (sfu_fast_sincos: [-4, 4); sin_precise: [-2e5, 2e5)).

__global__ void sfu_fast_sincos(const float *__restrict__ in, float *__restrict__ out, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) {
        const float s = __sinf(x);
        const float c = __cosf(x);
        acc += s * c;
        x = fmaf(x, 0.999f, c);
    }
    out[i] = acc;
}

__global__ void sin_precise(const float *__restrict__ in, float *__restrict__ out, int n, int iters)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = in[i];
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k)
        acc += sinf(x + 7.5f * (float)k);
    out[i] = acc;
}
