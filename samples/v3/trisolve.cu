// Warpline validation suite v3, family "trisolve": triangular loops of dense factorisations.
// Matrices are row-major floats.
//   trsm_lower_rhs     : X = L^-1 B for many right-hand sides (L n x n lower triangular, B and X
//                        n x nrhs): one thread per right-hand side runs the forward substitution, row
//                        i being a dot product over the i rows solved before it
//   cholesky_col       : column k of a left-looking Cholesky factorisation A = L L^T: thread 0 of
//                        every block computes the diagonal element with a serial loop over row k of L
//                        while the block waits at the barrier; then each thread i > k takes the dot
//                        product of rows i and k of L over the k columns already factorised
//   ltri_packed_matvec : y = L x with L lower triangular in packed row storage (row i is i + 1 floats
//                        starting at i (i + 1) / 2): thread i loops over its i + 1 columns
// Inputs: uniform random matrices (diagonals of L and A made large in the value ranges).

__global__ void trsm_lower_rhs(const float *__restrict__ L, const float *__restrict__ B, float *X, int n, int nrhs)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nrhs)
        return;
    for (int i = 0; i < n; ++i) {
        const float *li = L + (size_t)i * n;
        float acc = B[(size_t)i * nrhs + c];
        for (int j = 0; j < i; ++j)
            acc -= li[j] * X[(size_t)j * nrhs + c];
        X[(size_t)i * nrhs + c] = acc / li[i];
    }
}

__global__ void cholesky_col(const float *__restrict__ A, float *L, int n, int k)
{
    __shared__ float diag;
    const float *lk = L + (size_t)k * n;
    if (threadIdx.x == 0) {
        float acc = A[(size_t)k * n + k];
        for (int j = 0; j < k; ++j)
            acc -= lk[j] * lk[j];
        diag = sqrtf(acc);
        if (blockIdx.x == 0)
            L[(size_t)k * n + k] = diag;
    }
    __syncthreads();
    const int i = k + 1 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float *li = L + (size_t)i * n;
    float acc = A[(size_t)i * n + k];
    for (int j = 0; j < k; ++j)
        acc -= li[j] * lk[j];
    L[(size_t)i * n + k] = acc / diag;
}

__global__ void ltri_packed_matvec(const float *__restrict__ P, const float *__restrict__ x, float *__restrict__ y,
                                   int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float *row = P + (size_t)i * (i + 1) / 2;
    float acc = 0.0f;
    for (int j = 0; j <= i; ++j)
        acc += row[j] * x[j];
    y[i] = acc;
}
