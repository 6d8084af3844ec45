// Warpline sample: 2-D thermal stencil with "pyramid" time steps in shared memory.
//
// Each 16x16 thread block loads a tile of the temperature and power grids, then
// advances the simulation `iteration` time steps inside shared memory.  After
// every step the valid region of the tile shrinks by one cell on each side, so a
// block only writes back the cells that are still correct after the last step
// (the inner (16 - 2*iteration)^2 region).  Blocks therefore overlap by
// 2*pyramid_height cells; the host grid is ceil(cols / (16 - 2*pyramid_height)).
//
// Launch used by the Many-BSP worked case: 512x512 grid, pyramid height 2,
// grid (43, 43), block (16, 16), iteration = 2, border_cols = border_rows = 2.

#define HS_BLOCK 16

// true when lo <= v <= hi
__device__ __forceinline__ bool hs_inside(int v, int lo, int hi)
{
    return v >= lo && v <= hi;
}

__global__ void calculate_temp(int iteration,      // time steps done by this launch
                               float *power,       // power dissipated per cell
                               float *temp_src,    // temperatures before the launch
                               float *temp_dst,    // temperatures after the launch
                               int grid_cols, int grid_rows,
                               int border_cols, int border_rows,  // halo width (= pyramid height)
                               float Cap, float Rx, float Ry, float Rz,
                               float step)
{
    __shared__ float t_now[HS_BLOCK][HS_BLOCK];
    __shared__ float p_tile[HS_BLOCK][HS_BLOCK];
    __shared__ float t_next[HS_BLOCK][HS_BLOCK];

    const float amb_temp = 80.0f;
    const float step_div_cap = step / Cap;
    const float inv_rx = 1.0f / Rx;
    const float inv_ry = 1.0f / Ry;
    const float inv_rz = 1.0f / Rz;

    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;

    // Each block computes a (16 - 2*iteration)^2 interior; it starts 'border' cells
    // to the up/left of that interior.
    const int inner_w = HS_BLOCK - 2 * iteration;
    const int inner_h = HS_BLOCK - 2 * iteration;
    const int tile_y0 = inner_h * by - border_rows;
    const int tile_x0 = inner_w * bx - border_cols;

    const int gy = tile_y0 + ty;
    const int gx = tile_x0 + tx;
    const int gidx = grid_cols * gy + gx;

    if (hs_inside(gy, 0, grid_rows - 1) && hs_inside(gx, 0, grid_cols - 1)) {
        t_now[ty][tx] = temp_src[gidx];
        p_tile[ty][tx] = power[gidx];
    }
    __syncthreads();

    // Part of the tile that lies inside the chip (for edge blocks).
    const int lo_y = (tile_y0 < 0) ? -tile_y0 : 0;
    const int hi_y = (tile_y0 + HS_BLOCK - 1 > grid_rows - 1)
                         ? HS_BLOCK - 1 - (tile_y0 + HS_BLOCK - 1 - grid_rows + 1)
                         : HS_BLOCK - 1;
    const int lo_x = (tile_x0 < 0) ? -tile_x0 : 0;
    const int hi_x = (tile_x0 + HS_BLOCK - 1 > grid_cols - 1)
                         ? HS_BLOCK - 1 - (tile_x0 + HS_BLOCK - 1 - grid_cols + 1)
                         : HS_BLOCK - 1;

    // Neighbours, clamped to the chip edge.
    const int n_y = (ty - 1 < lo_y) ? lo_y : ty - 1;
    const int s_y = (ty + 1 > hi_y) ? hi_y : ty + 1;
    const int w_x = (tx - 1 < lo_x) ? lo_x : tx - 1;
    const int e_x = (tx + 1 > hi_x) ? hi_x : tx + 1;

    bool updated = false;
    for (int k = 0; k < iteration; ++k) {
        updated = false;
        if (hs_inside(tx, k + 1, HS_BLOCK - k - 2) &&
            hs_inside(ty, k + 1, HS_BLOCK - k - 2) &&
            hs_inside(tx, lo_x, hi_x) && hs_inside(ty, lo_y, hi_y)) {
            updated = true;
            const float centre = t_now[ty][tx];
            t_next[ty][tx] = centre + step_div_cap *
                (p_tile[ty][tx] +
                 (t_now[s_y][tx] + t_now[n_y][tx] - 2.0f * centre) * inv_ry +
                 (t_now[ty][e_x] + t_now[ty][w_x] - 2.0f * centre) * inv_rx +
                 (amb_temp - centre) * inv_rz);
        }
        __syncthreads();
        if (k == iteration - 1)
            break;
        if (updated)
            t_now[ty][tx] = t_next[ty][tx];
        __syncthreads();
    }

    // Only the cells updated in the final step hold the new temperature.
    if (updated)
        temp_dst[gidx] = t_next[ty][tx];
}
