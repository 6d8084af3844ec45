// Warpline validation suite v2, family "smallgrid": grids far smaller than the GPU.
//   small_fma_chain : few blocks, each thread runs four independent FMA chains of `iters` steps
//                     (latency-bound: too few warps to hide the FMA latency)
//   small_stream    : a grid-stride scale-and-add over n floats with only a handful of blocks
//                     (memory-latency-bound: few loads in flight)
// Inputs: in uniform random floats; out floats (at least gridDim.x*blockDim.x for the chain).

__global__ void small_fma_chain(float *__restrict__ out, int iters, float a, float b)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x0 = 1.0e-6f * (float)i;
    float x1 = x0 + 1.0f;
    float x2 = x0 + 2.0f;
    float x3 = x0 + 3.0f;
    for (int k = 0; k < iters; ++k) {
        x0 = fmaf(x0, a, b);
        x1 = fmaf(x1, a, b);
        x2 = fmaf(x2, a, b);
        x3 = fmaf(x3, a, b);
    }
    out[i] = x0 + x1 + x2 + x3;
}

__global__ void small_stream(const float *__restrict__ in, float *__restrict__ out, int n, float a)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = a * in[i] + 1.0f;
}
