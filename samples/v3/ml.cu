// Warpline validation suite v3, family "ml": neural-network layers written in plain CUDA (fp32).
//   softmax_row_online : row softmax, one warp per row: one pass keeps a running maximum and a
//                        rescaled running sum per lane, the lanes combine them with shuffles, a
//                        second pass writes exp(x - max) / sum
//   layernorm_welford  : layer normalisation, one block per row: Welford mean / variance in a strided
//                        loop, combined across lanes (shuffles) and warps (shared memory), then
//                        (x - mean) / sqrt(var + eps) * gamma + beta
//   attention_rowwarp  : scaled dot-product attention O = softmax(Q K^T * scale) V with head dimension
//                        32 for each (batch * head) slice of seq x 32 floats (gridDim.y slices). One
//                        warp per query row, lane = dimension; the block's warps share 32-key tiles of
//                        K and V staged in shared memory; online softmax. causal != 0 skips the keys
//                        after the query.
//   conv2d_nchw_3x3    : direct 3x3 convolution, stride 1, zero padding 1, NCHW tensors; 2-D blocks over
//                        one output plane, gridDim.z = batch * output channels; the output channel's
//                        9 C weights are staged in shared memory (dynamic)
// Inputs: uniform random activations and weights.

#define FULL_MASK 0xffffffffu

__global__ void softmax_row_online(const float *__restrict__ in, float *__restrict__ out, int rows, int cols)
{
    const int lane = threadIdx.x & 31;
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (row >= rows)
        return;
    const float *x = in + (size_t)row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float v = x[c];
        const float mn = fmaxf(m, v);
        s = s * __expf(m - mn) + __expf(v - mn);
        m = mn;
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float mo = __shfl_xor_sync(FULL_MASK, m, offset);
        const float so = __shfl_xor_sync(FULL_MASK, s, offset);
        const float mn = fmaxf(m, mo);
        s = s * __expf(m - mn) + so * __expf(mo - mn);
        m = mn;
    }
    const float inv = 1.0f / s;
    float *y = out + (size_t)row * cols;
    for (int c = lane; c < cols; c += 32)
        y[c] = __expf(x[c] - m) * inv;
}

// Chan et al.'s combination of two (count, mean, M2) partial results into the first.
__device__ __forceinline__ void welford_merge(float &n, float &mean, float &m2, float nb, float meanb, float m2b)
{
    const float total = n + nb;
    if (total == 0.0f)
        return;
    const float delta = meanb - mean;
    const float wb = nb / total;
    mean += delta * wb;
    m2 += m2b + delta * delta * n * wb;
    n = total;
}

// The (count, mean, M2) of the whole warp, in every lane.
__device__ __forceinline__ void welford_warp(float &n, float &mean, float &m2)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float nb = __shfl_xor_sync(FULL_MASK, n, offset);
        const float mb = __shfl_xor_sync(FULL_MASK, mean, offset);
        const float m2b = __shfl_xor_sync(FULL_MASK, m2, offset);
        welford_merge(n, mean, m2, nb, mb, m2b);
    }
}

__global__ void layernorm_welford(const float *__restrict__ in, const float *__restrict__ gamma,
                                  const float *__restrict__ beta, float *__restrict__ out, int cols, float eps)
{
    __shared__ float part_n[32], part_mean[32], part_m2[32];
    __shared__ float row_mean, row_rstd;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int nwarps = blockDim.x >> 5;
    const float *x = in + (size_t)blockIdx.x * cols;
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x) {
        const float v = x[c];
        n += 1.0f;
        const float d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
    }
    welford_warp(n, mean, m2);
    if (lane == 0) {
        part_n[warp] = n;
        part_mean[warp] = mean;
        part_m2[warp] = m2;
    }
    __syncthreads();
    if (warp == 0) {
        n = lane < nwarps ? part_n[lane] : 0.0f;
        mean = lane < nwarps ? part_mean[lane] : 0.0f;
        m2 = lane < nwarps ? part_m2[lane] : 0.0f;
        welford_warp(n, mean, m2);
        if (lane == 0) {
            row_mean = mean;
            row_rstd = rsqrtf(m2 / n + eps);
        }
    }
    __syncthreads();
    const float mu = row_mean, rstd = row_rstd;
    float *y = out + (size_t)blockIdx.x * cols;
    for (int c = tid; c < cols; c += blockDim.x)
        y[c] = (x[c] - mu) * rstd * gamma[c] + beta[c];
}

__global__ void attention_rowwarp(const float *__restrict__ Q, const float *__restrict__ K,
                                  const float *__restrict__ V, float *__restrict__ O, int seq, int causal, float scale)
{
    __shared__ float ks[32][32], vs[32][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    const size_t slice = (size_t)blockIdx.y * seq * 32;
    const int qi = blockIdx.x * nwarps + warp;
    const bool active = qi < seq;
    const float q = active ? Q[slice + (size_t)qi * 32 + lane] * scale : 0.0f;
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    const int block_last = min(seq, (int)(blockIdx.x + 1) * nwarps);   // one past the block's last query
    const int kend = causal ? block_last : seq;
    for (int k0 = 0; k0 < kend; k0 += 32) {
        __syncthreads();   // every warp is done with the previous tile
        for (int r = warp; r < 32; r += nwarps) {
            const int key = k0 + r;
            ks[r][lane] = key < seq ? K[slice + (size_t)key * 32 + lane] : 0.0f;
            vs[r][lane] = key < seq ? V[slice + (size_t)key * 32 + lane] : 0.0f;
        }
        __syncthreads();
        if (!active)
            continue;
        const int kmax = causal ? min(32, qi - k0 + 1) : min(32, seq - k0);
        for (int r = 0; r < kmax; ++r) {
            float s = q * ks[r][lane];
            for (int offset = 16; offset > 0; offset >>= 1)
                s += __shfl_xor_sync(FULL_MASK, s, offset);
            const float mn = fmaxf(m, s);
            const float corr = __expf(m - mn);
            const float p = __expf(s - mn);
            l = l * corr + p;
            acc = acc * corr + p * vs[r][lane];
            m = mn;
        }
    }
    if (active)
        O[slice + (size_t)qi * 32 + lane] = acc / l;
}

__global__ void conv2d_nchw_3x3(const float *__restrict__ in, const float *__restrict__ weight,
                                const float *__restrict__ bias, float *__restrict__ out, int C, int K, int H, int W)
{
    extern __shared__ float wk[];
    const int n = blockIdx.z / K, k = blockIdx.z % K;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int i = tid; i < 9 * C; i += blockDim.x * blockDim.y)
        wk[i] = weight[(size_t)k * 9 * C + i];
    __syncthreads();
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H)
        return;
    float acc = bias[k];
    for (int c = 0; c < C; ++c) {
        const float *plane = in + ((size_t)n * C + c) * H * W;
        const float *w9 = wk + c * 9;
        for (int ky = 0; ky < 3; ++ky) {
            const int yy = y + ky - 1;
            if (yy < 0 || yy >= H)
                continue;
            for (int kx = 0; kx < 3; ++kx) {
                const int xx = x + kx - 1;
                if (xx < 0 || xx >= W)
                    continue;
                acc += w9[ky * 3 + kx] * plane[yy * W + xx];
            }
        }
    }
    out[(((size_t)n * K + k) * H + y) * W + x] = acc;
}
