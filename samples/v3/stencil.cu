// Warpline validation suite v3, family "stencil": structured-grid updates as PDE solvers write them.
// Grids are row-major floats, x fastest; boundary points are left to the boundary-condition code.
//   jacobi2d_9pt   : one Jacobi sweep of a 9-point (box) smoother on an nx x ny grid, 2-D blocks,
//                    every neighbour read from global memory
//   wave2d_leapfrog: one time step of the 2-D wave equation (second-order leapfrog): reads the
//                    current field (5 points) and the previous one, writes the next
//   heat3d_zmarch  : one explicit step of the 3-D heat equation (7 points) with 2.5-D blocking:
//                    a 2-D grid of blocks marches along z; the current plane is staged in shared
//                    memory with a one-point halo ((bx+2)*(by+2) floats of dynamic shared memory),
//                    the planes below and above stay in registers
// Inputs: uniform random fields.

__global__ void jacobi2d_9pt(const float *__restrict__ in, float *__restrict__ out, int nx, int ny, float c0,
                             float c1, float c2)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const float *p = in + (size_t)y * nx + x;
    const float edges = p[-1] + p[1] + p[-nx] + p[nx];
    const float corners = p[-nx - 1] + p[-nx + 1] + p[nx - 1] + p[nx + 1];
    out[(size_t)y * nx + x] = c0 * p[0] + c1 * edges + c2 * corners;
}

__global__ void wave2d_leapfrog(const float *__restrict__ u, const float *__restrict__ u_prev,
                                float *__restrict__ u_next, int nx, int ny, float courant2)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const size_t i = (size_t)y * nx + x;
    const float lap = u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - 4.0f * u[i];
    u_next[i] = 2.0f * u[i] - u_prev[i] + courant2 * lap;
}

__global__ void heat3d_zmarch(const float *__restrict__ in, float *__restrict__ out, int nx, int ny, int nz,
                              float c0, float c1)
{
    extern __shared__ float plane[];
    const int W = blockDim.x + 2;
    const int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const bool inside = x < nx && y < ny;
    const size_t slab = (size_t)nx * ny;
    const size_t xy = (size_t)y * nx + x;
    const bool interior = inside && x > 0 && y > 0 && x < nx - 1 && y < ny - 1;

    float below = inside ? in[xy] : 0.0f;
    float here = inside ? in[slab + xy] : 0.0f;
    for (int z = 1; z < nz - 1; ++z) {
        const size_t at = (size_t)z * slab + xy;
        const float above = inside ? in[at + slab] : 0.0f;
        __syncthreads();  // the previous plane has been read by every thread
        plane[ty * W + tx] = here;
        if (threadIdx.x == 0)
            plane[ty * W] = (inside && x > 0) ? in[at - 1] : 0.0f;
        if (threadIdx.x == blockDim.x - 1)
            plane[ty * W + tx + 1] = (inside && x + 1 < nx) ? in[at + 1] : 0.0f;
        if (threadIdx.y == 0)
            plane[tx] = (inside && y > 0) ? in[at - nx] : 0.0f;
        if (threadIdx.y == blockDim.y - 1)
            plane[(ty + 1) * W + tx] = (inside && y + 1 < ny) ? in[at + nx] : 0.0f;
        __syncthreads();
        if (interior) {
            const float sides = plane[ty * W + tx - 1] + plane[ty * W + tx + 1] + plane[(ty - 1) * W + tx] +
                                plane[(ty + 1) * W + tx];
            out[at] = c0 * here + c1 * (sides + below + above);
        }
        below = here;
        here = above;
    }
}
