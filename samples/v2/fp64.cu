// Warpline validation suite v2, family "fp64": double precision.
//   dp_fma_chain : four independent double FMA chains of `iters` steps per thread (DFMA-bound)
//   dp_reduce    : grid-stride double sum, warp shuffles on doubles, one double atomicAdd per block
// Inputs: in (n uniform random doubles); out doubles (zeroed).

__global__ void dp_fma_chain(double *__restrict__ out, int iters, double a, double b)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double x0 = 1.0e-9 * (double)i;
    double x1 = x0 + 0.25;
    double x2 = x0 + 0.5;
    double x3 = x0 + 0.75;
    for (int k = 0; k < iters; ++k) {
        x0 = fma(x0, a, b);
        x1 = fma(x1, a, b);
        x2 = fma(x2, a, b);
        x3 = fma(x3, a, b);
    }
    out[i] = x0 + x1 + x2 + x3;
}

__global__ void dp_reduce(const double *__restrict__ in, double *out, int n)
{
    __shared__ double partial[32];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += in[i];
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0)
        partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        acc = lane < warps ? partial[lane] : 0.0;
        for (int offset = 16; offset > 0; offset >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        if (lane == 0)
            atomicAdd(out, acc);
    }
}
