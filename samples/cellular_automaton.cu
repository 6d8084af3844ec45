// Warpline sample: one generation of a two-species "invasion" cellular automaton.
//
// world[r * cols + c] holds 0 (empty), 1 (species A) or 2 (species B).  The grid
// wraps around at its edges (torus).  Rules for one generation, from the 8
// neighbours of a cell:
//   empty cell : becomes species s when exactly 3 neighbours are s and the other
//                species does not also have exactly 3 (a tie stays empty);
//   living cell: dies of isolation (< 2 friends), of overcrowding (> 3 friends)
//                or in a fight (more hostile than friendly neighbours); deaths in
//                a fight are counted per cell in `fights`.
// Two kernels with the same rules:
//   invasion_step_global : every neighbour read goes to global memory;
//   invasion_step_shared : a (CA_T + 2)^2 tile with a one-cell halo is staged in
//                          shared memory first (block CA_T x CA_T = 16 x 16).

#define CA_T 16

__device__ __forceinline__ int next_state(int self, int count_a, int count_b, int *fought)
{
    *fought = 0;
    if (self == 0) {
        const bool a3 = (count_a == 3), b3 = (count_b == 3);
        if (a3 && !b3) return 1;
        if (b3 && !a3) return 2;
        return 0;
    }
    const int friends = (self == 1) ? count_a : count_b;
    const int hostile = (self == 1) ? count_b : count_a;
    if (hostile > friends) {
        *fought = 1;
        return 0;
    }
    if (friends < 2 || friends > 3)
        return 0;
    return self;
}

__global__ void invasion_step_global(const int *world, int *next, int *fights,
                                     int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols)
        return;

    int count_a = 0, count_b = 0;
    for (int dr = -1; dr <= 1; ++dr) {
        const int rr = (r + dr + rows) % rows;
        for (int dc = -1; dc <= 1; ++dc) {
            if (dr == 0 && dc == 0)
                continue;
            const int cc = (c + dc + cols) % cols;
            const int v = world[rr * cols + cc];
            count_a += (v == 1);
            count_b += (v == 2);
        }
    }
    int fought;
    const int idx = r * cols + c;
    next[idx] = next_state(world[idx], count_a, count_b, &fought);
    fights[idx] += fought;
}

__global__ void invasion_step_shared(const int *world, int *next, int *fights,
                                     int rows, int cols)
{
    __shared__ int tile[CA_T + 2][CA_T + 2];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int r0 = blockIdx.y * CA_T - 1;      // tile origin including the halo
    const int c0 = blockIdx.x * CA_T - 1;

    // (CA_T+2)^2 = 324 cells loaded by 256 threads: strided over the tile.
    for (int i = ty * CA_T + tx; i < (CA_T + 2) * (CA_T + 2); i += CA_T * CA_T) {
        const int lr = i / (CA_T + 2);
        const int lc = i % (CA_T + 2);
        const int gr = (r0 + lr + rows) % rows;
        const int gc = (c0 + lc + cols) % cols;
        tile[lr][lc] = world[gr * cols + gc];
    }
    __syncthreads();

    const int r = blockIdx.y * CA_T + ty;
    const int c = blockIdx.x * CA_T + tx;
    if (r >= rows || c >= cols)
        return;

    int count_a = 0, count_b = 0;
#pragma unroll
    for (int dr = 0; dr < 3; ++dr) {
#pragma unroll
        for (int dc = 0; dc < 3; ++dc) {
            if (dr == 1 && dc == 1)
                continue;
            const int v = tile[ty + dr][tx + dc];
            count_a += (v == 1);
            count_b += (v == 2);
        }
    }
    int fought;
    const int idx = r * cols + c;
    next[idx] = next_state(tile[ty + 1][tx + 1], count_a, count_b, &fought);
    fights[idx] += fought;
}
