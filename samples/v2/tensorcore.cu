// Warpline validation suite v2, family "tensorcore": half-precision GEMM on the tensor cores
// through the wmma API (16x16x16 fragments, float accumulators). C = A B with A m x k,
// B k x n (both row-major __half), C m x n row-major float; m, n multiples of 64, k of 16.
//   wmma_gemm_global : one warp per 16x16 tile of C; fragments loaded straight from global memory
//   wmma_gemm_smem   : warps in pairs along n; each warp owns a 32x32 tile (2x2 fragments); the
//                      block's A panel ((blockDim.x/64)*32 x 16) and B panel (16 x 64) are staged
//                      in dynamic shared memory with 16-byte copies for every k step
//                      (dynamic shared memory: (blockDim.x/64)*1024 + 2048 bytes)
// Inputs: a, b uniform random halves in [-1, 1); c floats.
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_gemm_global(const __half *__restrict__ a, const __half *__restrict__ b,
                                 float *__restrict__ c, int m, int n, int k)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int tiles_n = n >> 4;
    const int tm = warp / tiles_n;
    const int tn = warp % tiles_n;
    if (tm >= (m >> 4))
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + (long long)tm * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + (long long)kk * n + tn * 16, n);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + (long long)tm * 16 * n + tn * 16, acc, n, wmma::mem_row_major);
}

__global__ void wmma_gemm_smem(const __half *__restrict__ a, const __half *__restrict__ b,
                               float *__restrict__ c, int m, int n, int k)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const int row_warps = blockDim.x >> 6;          // warps along m (warps come in pairs along n)
    __half *as = reinterpret_cast<__half *>(smem);   // row_warps*32 x 16
    __half *bs = as + row_warps * 32 * 16;           // 16 x 64
    const int warp = threadIdx.x >> 5;
    const int wm = warp >> 1;
    const int wn = warp & 1;
    const int row0 = blockIdx.y * (row_warps * 32);
    const int col0 = blockIdx.x * 64;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int kk = 0; kk < k; kk += 16) {
        for (int ch = threadIdx.x; ch < row_warps * 64; ch += blockDim.x) {
            const int r = ch >> 1;
            const int h = (ch & 1) * 8;
            *reinterpret_cast<int4 *>(as + r * 16 + h) =
                *reinterpret_cast<const int4 *>(a + (long long)(row0 + r) * k + kk + h);
        }
        for (int ch = threadIdx.x; ch < 128; ch += blockDim.x) {
            const int r = ch >> 3;
            const int h = (ch & 7) * 8;
            *reinterpret_cast<int4 *>(bs + r * 64 + h) =
                *reinterpret_cast<const int4 *>(b + (long long)(kk + r) * n + col0 + h);
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
        for (int i = 0; i < 2; ++i)
            wmma::load_matrix_sync(fa[i], as + (wm * 32 + i * 16) * 16, 16);
        for (int j = 0; j < 2; ++j)
            wmma::load_matrix_sync(fb[j], bs + wn * 32 + j * 16, 64);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
                wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(c + (long long)(row0 + wm * 32 + i * 16) * n + col0 + wn * 32 + j * 16,
                                    acc[i][j], n, wmma::mem_row_major);
}
