// Warpline sample: matrix transposes (the three classic variants).
//
// A TILE x TILE tile is handled by a TILE x ROWS thread block (32 x 8): each
// thread moves TILE/ROWS = 4 elements.  Matrix dimensions are multiples of TILE.
//   transpose_naive   : reads coalesced, writes with a stride of `height` floats.
//   transpose_tiled   : stages the tile in shared memory so both the global read
//                       and the global write are coalesced; column reads of the
//                       32x32 tile hit one shared-memory bank (32-way conflicts).
//   transpose_padded  : same as tiled with one padding column (tile[32][33]), so
//                       the column reads spread over all banks.
//   copy_tile         : the same access pattern without transposing (bandwidth
//                       reference for the three kernels above).

#define TILE 32
#define ROWS 8

__global__ void copy_tile(float *dst, const float *src, int width, int height)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        dst[(y + j) * width + x] = src[(y + j) * width + x];
}

__global__ void transpose_naive(float *dst, const float *src, int width, int height)
{
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        dst[x * height + (y + j)] = src[(y + j) * width + x];
}

__global__ void transpose_tiled(float *dst, const float *src, int width, int height)
{
    __shared__ float tile[TILE][TILE];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = src[(y + j) * width + x];

    __syncthreads();

    // Swap the block coordinates for the output tile.
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        dst[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transpose_padded(float *dst, const float *src, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = src[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        dst[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
