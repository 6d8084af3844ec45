// Warpline validation suite v2, family "rowops": row-wise normalisations of a rows x cols
// row-major float matrix (transformer-style).
//   softmax_row    : one block per row: block max, block sum of exp(x - max), then the
//                    normalised row (three passes over the row; block reductions through
//                    warp shuffles and a 32-float shared array)
//   layernorm_warp : one warp per row: sum and sum of squares by butterfly shuffles, then
//                    (x - mean) * rsqrt(var + eps) * gamma + beta
// Inputs: in uniform random floats in [-4, 4); gamma, beta cols floats; out floats.

__device__ __forceinline__ float warp_allreduce_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ __forceinline__ float warp_allreduce_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__global__ void softmax_row(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    __shared__ float red[32];
    const int r = blockIdx.x;
    if (r >= rows)
        return;
    const float *x = in + (long long)r * cols;
    float *y = out + (long long)r * cols;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;

    float m = -3.0e38f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, x[c]);
    m = warp_allreduce_max(m);
    if (lane == 0)
        red[warp] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < warps; ++w)
        m = fmaxf(m, red[w]);
    __syncthreads();

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += __expf(x[c] - m);
    s = warp_allreduce_sum(s);
    if (lane == 0)
        red[warp] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < warps; ++w)
        s += red[w];
    const float inv = 1.0f / s;

    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[c] = __expf(x[c] - m) * inv;
}

__global__ void layernorm_warp(const float *__restrict__ in, float *__restrict__ out,
                               const float *__restrict__ gamma, const float *__restrict__ beta,
                               int rows, int cols, float eps)
{
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float *x = in + (long long)r * cols;
    float *y = out + (long long)r * cols;
    float s = 0.0f;
    float s2 = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float v = x[c];
        s += v;
        s2 += v * v;
    }
    s = warp_allreduce_sum(s);
    s2 = warp_allreduce_sum(s2);
    const float mean = s / (float)cols;
    const float var = fmaxf(s2 / (float)cols - mean * mean, 0.0f);
    const float rstd = rsqrtf(var + eps);
    for (int c = lane; c < cols; c += 32)
        y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}
