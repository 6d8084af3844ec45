// Corpus: warp matrix multiply-accumulate (wmma) on 16x16x16 half tiles.
#include <mma.h>
using namespace nvcuda;

__global__ void wmma_gemm(const __half *a, const __half *b, float *c, int m, int n, int k)
{
    const int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
    if (warp_m * 16 >= m || warp_n * 16 >= n) return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int kk = 0; kk < k; kk += 16) {
        wmma::load_matrix_sync(fa, a + warp_m * 16 * k + kk, k);
        wmma::load_matrix_sync(fb, b + warp_n * 16 * k + kk, k);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + warp_m * 16 * n + warp_n * 16, fc, n, wmma::mem_row_major);
}
