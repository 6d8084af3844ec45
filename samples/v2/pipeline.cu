// Warpline validation suite v2, family "pipeline": three kernels run one after the other on the
// same n-float data (the launch file lists them in that order for each block size):
//   pipe_scale_bias      : y = a*x + b
//   pipe_blur3           : z[i] = (y[i-1] + 2 y[i] + y[i+1]) / 4, clamped at the ends
//   pipe_threshold_count : flags[i] = z[i] > thr (one byte each), and a count of the set flags
//                          (warp ballot + popc, one atomicAdd per warp)
// Inputs: x uniform random floats; y, z floats; flags bytes; count one int (zeroed).

__global__ void pipe_scale_bias(const float *__restrict__ x, float *__restrict__ y, int n, float a, float b)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}

__global__ void pipe_blur3(const float *__restrict__ y, float *__restrict__ z, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float left = y[max(i - 1, 0)];
        const float right = y[min(i + 1, n - 1)];
        z[i] = 0.25f * (left + 2.0f * y[i] + right);
    }
}

__global__ void pipe_threshold_count(const float *__restrict__ z, unsigned char *__restrict__ flags,
                                     int *count, int n, float thr)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool set = i < n && z[i] > thr;
    if (i < n)
        flags[i] = set ? 1 : 0;
    const unsigned votes = __ballot_sync(0xffffffffu, set);
    if ((threadIdx.x & 31) == 0 && votes != 0u)
        atomicAdd(count, __popc(votes));
}
