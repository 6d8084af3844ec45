// Warpline validation suite v3, family "gemm": single-precision matrix products as they appear in
// application code that does not call cuBLAS. All matrices row-major floats.
//   gemm_naive_2d   : C = alpha A B + beta C, one thread per element of C, 2-D blocks (x along the
//                     columns of C); the k loop reads a row of A and a column of B from global memory
//   gemm_naive_1d   : the same product with a 1-D grid: the flat thread index is split into
//                     (row, col) = (i / n, i % n)
//   gemm_smem_tiled : the textbook shared-memory tiling; the tile edge is the (square) block edge,
//                     two tiles of blockDim.x^2 floats in dynamic shared memory
//   syrk_lower      : C = alpha A A^T + beta C on the lower triangle only (A is n x k); threads above
//                     the diagonal do nothing
// Inputs: A, B uniform random in [-1, 1); C uniform random (beta != 0 reads it).

__global__ void gemm_naive_2d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                              int m, int n, int k, float alpha, float beta)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.0f;
        for (int p = 0; p < k; ++p)
            acc += A[(size_t)row * k + p] * B[(size_t)p * n + col];
        const size_t at = (size_t)row * n + col;
        C[at] = alpha * acc + beta * C[at];
    }
}

__global__ void gemm_naive_1d(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                              int m, int n, int k, float alpha, float beta)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)m * n)
        return;
    const int row = (int)(i / n);
    const int col = (int)(i % n);
    const float *a = A + (size_t)row * k;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc += a[p] * B[(size_t)p * n + col];
    C[i] = alpha * acc + beta * C[i];
}

// Launch with square blocks (T x T threads, T = blockDim.x) and 2 * T * T * 4 bytes of dynamic
// shared memory; m, n, k need not be multiples of T (edges are padded with zeros).
__global__ void gemm_smem_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                                int m, int n, int k, float alpha, float beta)
{
    extern __shared__ float tiles[];
    const int T = blockDim.x;
    float *As = tiles;
    float *Bs = tiles + T * T;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty;
    const int col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int p0 = 0; p0 < k; p0 += T) {
        const int pa = p0 + tx, pb = p0 + ty;
        As[ty * T + tx] = (row < m && pa < k) ? A[(size_t)row * k + pa] : 0.0f;
        Bs[ty * T + tx] = (pb < k && col < n) ? B[(size_t)pb * n + col] : 0.0f;
        __syncthreads();
        for (int p = 0; p < T; ++p)
            acc += As[ty * T + p] * Bs[p * T + tx];
        __syncthreads();
    }
    if (row < m && col < n) {
        const size_t at = (size_t)row * n + col;
        C[at] = alpha * acc + beta * C[at];
    }
}

__global__ void syrk_lower(const float *__restrict__ A, float *__restrict__ C, int n, int k, float alpha, float beta)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col > row)
        return;
    const float *ar = A + (size_t)row * k;
    const float *ac = A + (size_t)col * k;
    float acc = 0.0f;
    for (int p = 0; p < k; ++p)
        acc += ar[p] * ac[p];
    const size_t at = (size_t)row * n + col;
    C[at] = alpha * acc + beta * C[at];
}
