// Warpline sample: shared-memory tiled matrix multiply C = A * B
// (CUDA-samples "matrixMul" shape: one TILE x TILE output tile per block).
//
// A is hA x wA, B is wA x wB, C is hA x wB, all row-major; wA and wB must be
// multiples of TILE.  The outer loop walks the tiles along A's row / B's column:
// load one tile of each into shared memory, barrier, multiply-accumulate the
// tile, barrier.  The inner k loop is fully unrolled by the compiler (TILE is a
// compile-time constant), so the PTX shows one tile-loop body per iteration.
//
// Two instantiations: TILE = 32 (the Many-BSP worked case: 1024 threads per
// block, A 320x320, B 640x320 -> grid 20x10 = 200 blocks, 10 tile iterations)
// and TILE = 16.

template <int TILE>
__global__ void matrixMulTiled(float *C, float *A, float *B, int wA, int wB)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;

    // First element of A's block row and of B's block column; per-tile steps.
    const int a_first = wA * TILE * by;
    const int a_last = a_first + wA - 1;
    const int a_step = TILE;
    const int b_first = TILE * bx;
    const int b_step = TILE * wB;

    float acc = 0.0f;

    for (int a = a_first, b = b_first; a <= a_last; a += a_step, b += b_step) {
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();

#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];

        __syncthreads();
    }

    const int c = wB * TILE * by + TILE * bx;
    C[c + wB * ty + tx] = acc;
}

// Square-matrix variant with an explicit tile counter (width / TILE iterations)
// and a rolled k loop, for comparing loop shapes.
template <int TILE>
__global__ void matrixMulSquare(const float *A, const float *B, float *C, int width)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;

    for (int m = 0; m < width / TILE; ++m) {
        As[threadIdx.y][threadIdx.x] = A[row * width + m * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(m * TILE + threadIdx.y) * width + col];
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * width + col] = acc;
}

template __global__ void matrixMulTiled<32>(float *, float *, float *, int, int);
template __global__ void matrixMulTiled<16>(float *, float *, float *, int, int);
template __global__ void matrixMulSquare<16>(const float *, const float *, float *, int);
