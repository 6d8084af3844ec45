// Warpline validation suite v3, family "gemv": matrix-vector products y = A x (m x n floats).
//   gemv_row_thread : A row-major, one thread per row walking its row (what a first port of a
//                     CPU loop looks like)
//   gemv_row_warp   : A row-major, 2-D blocks of 32 x R threads: each warp (threadIdx.y) owns one
//                     row, its lanes stride the row and sum with shuffles
//   gemv_col_major  : A column-major (Fortran / LAPACK storage, leading dimension m), one thread
//                     per row: consecutive threads read consecutive elements of each column
// Inputs: A, x uniform random in [-1, 1); y written.

__global__ void gemv_row_thread(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y,
                                int m, int n)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m)
        return;
    const float *a = A + (size_t)r * n;
    float acc = 0.0f;
    for (int c = 0; c < n; ++c)
        acc += a[c] * x[c];
    y[r] = acc;
}

__global__ void gemv_row_warp(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y,
                              int m, int n)
{
    const int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= m)
        return;
    const float *a = A + (size_t)r * n;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < n; c += 32)
        acc += a[c] * x[c];
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0)
        y[r] = acc;
}

__global__ void gemv_col_major(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y,
                               int m, int n)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m)
        return;
    float acc = 0.0f;
    for (int c = 0; c < n; ++c)
        acc += A[(size_t)c * m + r] * x[c];
    y[r] = acc;
}
