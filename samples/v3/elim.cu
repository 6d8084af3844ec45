// Warpline validation suite v3, family "elim": Gaussian elimination and LU factorisation kernels.
// Matrices are row-major floats.
//   gauss_fan2       : elimination step t of a dense n x n system a x = b, in place: every row r > t
//                      subtracts mult[r][t] (the multipliers of column t, from the previous kernel)
//                      times row t, on columns >= t; the threads of column t also update b.
//                      2-D blocks, x along the columns.
//   lu_batched_pivot : LU factorisation with partial pivoting of a batch of small n x n matrices,
//                      one block per matrix held in shared memory (n * n floats, dynamic). The pivot
//                      search is a serial loop of thread 0 while the other threads wait at the
//                      barrier; row swap, column scaling and the rank-1 update are shared out.
//   lu_perimeter     : one step of a right-looking blocked LU factorisation (no pivoting) of a batch
//                      of n x n matrices, tile B = blockDim.x / 2, diagonal tile at (off, off) already
//                      factorised. Block (x, matrix) takes the x-th tile right of the diagonal tile (its
//                      first B threads, one per column: U12 = L11^-1 A12) and the x-th tile below it
//                      (the other B threads, one per row: L21 = A21 U11^-1); both are triangular
//                      loops over the diagonal tile. Dynamic shared memory: 3 B (B + 1) floats.
//   lu_internal      : the same step's trailing update A22 -= L21 U12, one B x B block of threads per
//                      tile of A22 (B = blockDim.x = blockDim.y); the two panel tiles are staged in
//                      shared memory (2 B B floats, dynamic). gridDim.z = matrices in the batch.
// Inputs: uniform random matrices; the step (t, off) and sizes are launch arguments.

__global__ void gauss_fan2(const float *__restrict__ mult, float *__restrict__ a, float *__restrict__ b, int n,
                           int t)
{
    const int col = t + blockIdx.x * blockDim.x + threadIdx.x;
    const int row = t + 1 + blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= n || col >= n)
        return;
    const float m = mult[(size_t)row * n + t];
    a[(size_t)row * n + col] -= m * a[(size_t)t * n + col];
    if (col == t)
        b[row] -= m * b[t];
}

__global__ void lu_batched_pivot(const float *__restrict__ A, float *__restrict__ LU, int *__restrict__ piv, int n)
{
    extern __shared__ float s[];
    __shared__ int pivot_row;
    const int tid = threadIdx.x;
    const float *a = A + (size_t)blockIdx.x * n * n;
    for (int i = tid; i < n * n; i += blockDim.x)
        s[i] = a[i];
    __syncthreads();
    for (int k = 0; k < n; ++k) {
        if (tid == 0) {
            int p = k;
            float largest = fabsf(s[k * n + k]);
            for (int r = k + 1; r < n; ++r) {
                const float v = fabsf(s[r * n + k]);
                if (v > largest) {
                    largest = v;
                    p = r;
                }
            }
            pivot_row = p;
            piv[blockIdx.x * n + k] = p;
        }
        __syncthreads();
        const int p = pivot_row;
        if (p != k) {
            for (int c = tid; c < n; c += blockDim.x) {
                const float tmp = s[k * n + c];
                s[k * n + c] = s[p * n + c];
                s[p * n + c] = tmp;
            }
            __syncthreads();
        }
        const float inv = 1.0f / s[k * n + k];
        for (int r = k + 1 + tid; r < n; r += blockDim.x)
            s[r * n + k] *= inv;
        __syncthreads();
        const int w = n - k - 1;
        for (int i = tid; i < w * w; i += blockDim.x) {
            const int r = k + 1 + i / w;
            const int c = k + 1 + i % w;
            s[r * n + c] -= s[r * n + k] * s[k * n + c];
        }
        __syncthreads();
    }
    float *out = LU + (size_t)blockIdx.x * n * n;
    for (int i = tid; i < n * n; i += blockDim.x)
        out[i] = s[i];
}

__global__ void lu_perimeter(float *__restrict__ a, int n, int off)
{
    extern __shared__ float tiles[];
    const int B = blockDim.x / 2;
    const int P = B + 1;   // padded row pitch of the shared tiles
    float *dia = tiles;
    float *right = tiles + B * P;
    float *below = tiles + 2 * B * P;
    float *m = a + (size_t)blockIdx.y * n * n;
    const int t0 = off + B * (blockIdx.x + 1);
    const int tid = threadIdx.x;

    for (int i = tid; i < B * B; i += blockDim.x) {
        const int r = i / B, c = i % B;
        dia[r * P + c] = m[(size_t)(off + r) * n + off + c];
        right[r * P + c] = m[(size_t)(off + r) * n + t0 + c];
        below[r * P + c] = m[(size_t)(t0 + r) * n + off + c];
    }
    __syncthreads();
    if (tid < B) {
        const int c = tid;   // forward substitution down column c with the unit lower L11
        for (int i = 1; i < B; ++i) {
            float acc = right[i * P + c];
            for (int j = 0; j < i; ++j)
                acc -= dia[i * P + j] * right[j * P + c];
            right[i * P + c] = acc;
        }
    } else {
        const int r = tid - B;   // row r of the tile below: solve x U11 = a
        for (int j = 0; j < B; ++j) {
            float acc = below[r * P + j];
            for (int i = 0; i < j; ++i)
                acc -= below[r * P + i] * dia[i * P + j];
            below[r * P + j] = acc / dia[j * P + j];
        }
    }
    __syncthreads();
    for (int i = tid; i < B * B; i += blockDim.x) {
        const int r = i / B, c = i % B;
        m[(size_t)(off + r) * n + t0 + c] = right[r * P + c];
        m[(size_t)(t0 + r) * n + off + c] = below[r * P + c];
    }
}

__global__ void lu_internal(float *__restrict__ a, int n, int off)
{
    extern __shared__ float panel[];
    const int B = blockDim.x;
    float *l = panel;
    float *u = panel + B * B;
    float *m = a + (size_t)blockIdx.z * n * n;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = off + B * (blockIdx.y + 1) + ty;
    const int col = off + B * (blockIdx.x + 1) + tx;
    l[ty * B + tx] = m[(size_t)row * n + off + tx];
    u[ty * B + tx] = m[(size_t)(off + ty) * n + col];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < B; ++k)
        acc += l[ty * B + k] * u[k * B + tx];
    m[(size_t)row * n + col] -= acc;
}
