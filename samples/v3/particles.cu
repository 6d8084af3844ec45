// Warpline validation suite v3, family "particles": particle interactions.
//   nbody_float4_tile : all-pairs gravitational accelerations with Plummer softening; bodies are
//                       float4 (x, y, z, mass); each block stages blockDim.x bodies at a time in
//                       shared memory (dynamic: blockDim.x float4) and every thread sums over them
//   md_cells_lj       : Lennard-Jones forces with cell lists in a periodic box of ncx^3 cells whose
//                       edge is the cut-off. Particles are sorted by cell (cell c holds particles
//                       start[c] .. start[c + 1] - 1) and store their position relative to their
//                       cell's corner in units of the cell edge (float4 x, y, z in [0, 1), w unused).
//                       One block per cell, one thread per particle of the cell (blockDim.x is at
//                       least the largest cell); each of the 27 neighbour cells is staged in shared
//                       memory and every thread tests its particles against the cut-off.
// Inputs: uniform random positions and masses; cell sizes uniform in a range (start = their prefix sums).

__global__ void nbody_float4_tile(const float4 *__restrict__ pos, float4 *__restrict__ accel, int n, float eps2)
{
    extern __shared__ float4 tile[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 me = (i < n) ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = (j < n) ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 4
        for (int q = 0; q < (int)blockDim.x; ++q) {
            const float4 other = tile[q];
            const float dx = other.x - me.x, dy = other.y - me.y, dz = other.z - me.z;
            const float r2 = dx * dx + dy * dy + dz * dz + eps2;
            const float inv = rsqrtf(r2);
            const float s = other.w * inv * inv * inv;
            ax += s * dx;
            ay += s * dy;
            az += s * dz;
        }
        __syncthreads();
    }
    if (i < n)
        accel[i] = make_float4(ax, ay, az, 0.0f);
}

__global__ void md_cells_lj(const float4 *__restrict__ pos, const int *__restrict__ start, float4 *__restrict__ force,
                            int ncx, float cell_edge, float sigma2, float epsilon)
{
    extern __shared__ float4 neighbours[];
    const int c = blockIdx.x;
    const int cx = c % ncx, cy = (c / ncx) % ncx, cz = c / (ncx * ncx);
    const int p = start[c] + threadIdx.x;
    const bool mine = p < start[c + 1];
    const float4 me = mine ? pos[p] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const float cutoff2 = cell_edge * cell_edge;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
                const int nx = (cx + dx + ncx) % ncx, ny = (cy + dy + ncx) % ncx, nz = (cz + dz + ncx) % ncx;
                const int nc = (nz * ncx + ny) * ncx + nx;
                const int first = start[nc];
                const int count = start[nc + 1] - first;
                __syncthreads();   // the previous neighbour cell has been used
                if (threadIdx.x < count)
                    neighbours[threadIdx.x] = pos[first + threadIdx.x];
                __syncthreads();
                if (!mine)
                    continue;
                for (int q = 0; q < count; ++q) {
                    const float4 other = neighbours[q];
                    const float rx = (other.x + dx - me.x) * cell_edge;
                    const float ry = (other.y + dy - me.y) * cell_edge;
                    const float rz = (other.z + dz - me.z) * cell_edge;
                    const float r2 = rx * rx + ry * ry + rz * rz;
                    if (r2 < cutoff2 && r2 > 0.0f) {
                        const float sr2 = sigma2 / r2;
                        const float sr6 = sr2 * sr2 * sr2;
                        const float f = 24.0f * epsilon * sr6 * (2.0f * sr6 - 1.0f) / r2;
                        fx -= f * rx;
                        fy -= f * ry;
                        fz -= f * rz;
                    }
                }
            }
        }
    }
    if (mine)
        force[p] = make_float4(fx, fy, fz, 0.0f);
}
