// Warpline sample: blocked (tiled) Floyd-Warshall all-pairs shortest paths.
//
// dist is an n x n row-major int matrix (n a multiple of FW_B; "no edge" is a
// large value such as 1 << 29 so that a sum of two never overflows).  For each
// pivot tile p = 0 .. n/FW_B - 1 the host launches three kernels:
//   fw_phase1 <<<1,                 (FW_B, FW_B)>>>  the pivot tile (p, p) itself;
//   fw_phase2 <<<(n/FW_B, 2),       (FW_B, FW_B)>>>  tiles in pivot row p (y = 0)
//                                                    and pivot column p (y = 1);
//   fw_phase3 <<<(n/FW_B, n/FW_B),  (FW_B, FW_B)>>>  every other tile.
// Phases 1 and 2 relax through k one step at a time and need a barrier per k;
// phase 3 only reads the finished row/column tiles, so its k loop has none.

#define FW_B 32

__global__ void fw_phase1(int *dist, int n, int p)
{
    __shared__ int d[FW_B][FW_B];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int base = p * FW_B;
    const int g = (base + ty) * n + (base + tx);

    d[ty][tx] = dist[g];
    __syncthreads();

    for (int k = 0; k < FW_B; ++k) {
        const int via = d[ty][k] + d[k][tx];
        __syncthreads();
        if (via < d[ty][tx])
            d[ty][tx] = via;
        __syncthreads();
    }
    dist[g] = d[ty][tx];
}

__global__ void fw_phase2(int *dist, int n, int p)
{
    if (blockIdx.x == p)
        return;                       // the pivot tile was done in phase 1

    __shared__ int piv[FW_B][FW_B];   // tile (p, p)
    __shared__ int cur[FW_B][FW_B];   // the row or column tile being updated

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int pb = p * FW_B;
    const bool in_row = (blockIdx.y == 0);
    const int row0 = in_row ? pb : blockIdx.x * FW_B;
    const int col0 = in_row ? blockIdx.x * FW_B : pb;
    const int g = (row0 + ty) * n + (col0 + tx);

    piv[ty][tx] = dist[(pb + ty) * n + (pb + tx)];
    cur[ty][tx] = dist[g];
    __syncthreads();

    int best = cur[ty][tx];
    for (int k = 0; k < FW_B; ++k) {
        // Row tiles go through the pivot's rows, column tiles through its columns.
        const int via = in_row ? piv[ty][k] + cur[k][tx]
                               : cur[ty][k] + piv[k][tx];
        if (via < best)
            best = via;
        __syncthreads();
        cur[ty][tx] = best;
        __syncthreads();
    }
    dist[g] = best;
}

__global__ void fw_phase3(int *dist, int n, int p)
{
    if (blockIdx.x == p || blockIdx.y == p)
        return;                       // pivot row and column are final already

    __shared__ int left[FW_B][FW_B];  // tile (blockIdx.y, p)
    __shared__ int up[FW_B][FW_B];    // tile (p, blockIdx.x)

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int pb = p * FW_B;
    const int row = blockIdx.y * FW_B + ty;
    const int col = blockIdx.x * FW_B + tx;

    left[ty][tx] = dist[row * n + pb + tx];
    up[ty][tx] = dist[(pb + ty) * n + col];
    __syncthreads();

    int best = dist[row * n + col];
#pragma unroll 8
    for (int k = 0; k < FW_B; ++k)
        best = min(best, left[ty][k] + up[k][tx]);
    dist[row * n + col] = best;
}
