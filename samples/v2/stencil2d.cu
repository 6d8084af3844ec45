// Warpline validation suite v2, family "stencil2d": 2D 5-point Jacobi-style stencils on an
// nx x ny grid of floats (row-major), one output point per thread, interior points only.
//   stencil2d_5pt       : every neighbour read straight from global memory (reuse through L1/L2)
//   stencil2d_5pt_tiled : the block stages its tile plus a one-point halo in dynamic shared
//                         memory ((blockDim.x + 2) * (blockDim.y + 2) floats), then computes
// Inputs: in (nx*ny floats, uniform random), out (nx*ny floats).

__global__ void stencil2d_5pt(const float *__restrict__ in, float *__restrict__ out,
                              int nx, int ny, float c0, float c1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const int i = y * nx + x;
    out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

__global__ void stencil2d_5pt_tiled(const float *__restrict__ in, float *__restrict__ out,
                                    int nx, int ny, float c0, float c1)
{
    extern __shared__ float tile[];
    const int tw = blockDim.x + 2;
    const int tx = threadIdx.x + 1;
    const int ty = threadIdx.y + 1;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const bool inside = x < nx && y < ny;
    const int i = y * nx + x;

    tile[ty * tw + tx] = inside ? in[i] : 0.0f;
    if (threadIdx.x == 0)
        tile[ty * tw] = (inside && x > 0) ? in[i - 1] : 0.0f;
    if (threadIdx.x == blockDim.x - 1)
        tile[ty * tw + tx + 1] = (x + 1 < nx && y < ny) ? in[i + 1] : 0.0f;
    if (threadIdx.y == 0)
        tile[tx] = (inside && y > 0) ? in[i - nx] : 0.0f;
    if (threadIdx.y == blockDim.y - 1)
        tile[(ty + 1) * tw + tx] = (x < nx && y + 1 < ny) ? in[i + nx] : 0.0f;
    __syncthreads();

    if (x >= 1 && y >= 1 && x < nx - 1 && y < ny - 1) {
        const float centre = tile[ty * tw + tx];
        const float around = tile[ty * tw + tx - 1] + tile[ty * tw + tx + 1] +
                             tile[(ty - 1) * tw + tx] + tile[(ty + 1) * tw + tx];
        out[i] = c0 * centre + c1 * around;
    }
}
