// Warpline validation suite v2x (tuning supplement), family "rowwise": per-row work on a
// rows x cols row-major float matrix.
//   rms_norm_block  : one block per row: sum of squares (strided by blockDim.x, warp shuffles,
//                     a 32-float shared array), then the row again scaled by rsqrt and a weight
//   row_max_warp    : one warp per row: lanes stride the row by 32, butterfly max, lane 0 writes
//   row_center_warp : one warp per row: butterfly sum, then the row again minus its mean
// Inputs: in uniform random floats in [-4, 4); w cols floats; out floats.

__device__ __forceinline__ float xor_sum(float v)
{
    for (int lanes = 16; lanes > 0; lanes >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, lanes);
    return v;
}

__global__ void rms_norm_block(const float *__restrict__ in, float *__restrict__ out,
                               const float *__restrict__ w, int rows, int cols, float eps)
{
    __shared__ float partial[32];
    const int r = blockIdx.x;
    if (r >= rows)
        return;
    const float *x = in + (long long)r * cols;
    float *y = out + (long long)r * cols;
    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = x[c];
        ss = fmaf(v, v, ss);
    }
    ss = xor_sum(ss);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x >> 5] = ss;
    __syncthreads();
    float total = 0.0f;
    for (int i = 0; i < (int)(blockDim.x >> 5); ++i)
        total += partial[i];
    const float scale = rsqrtf(total / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[c] = x[c] * scale * w[c];
}

__global__ void row_max_warp(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float *x = in + (long long)r * cols;
    float m = -3.0e38f;
    for (int c = lane; c < cols; c += 32)
        m = fmaxf(m, x[c]);
    for (int lanes = 16; lanes > 0; lanes >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, lanes));
    if (lane == 0)
        out[r] = m;
}

__global__ void row_center_warp(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float *x = in + (long long)r * cols;
    float *y = out + (long long)r * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        s += x[c];
    const float mean = xor_sum(s) / cols;
    for (int c = lane; c < cols; c += 32)
        y[c] = x[c] - mean;
}
