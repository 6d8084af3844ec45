// Warpline validation suite v2, family "stencil3d": 3D 7-point stencils on an nx*ny*nz float
// volume (x fastest), interior points only.
//   stencil3d_7pt       : 3D grid, one thread per point, all seven reads from global memory
//   stencil3d_7pt_zmarch: 2D grid over (x, y); each thread walks z from 1 to nz-2 and keeps the
//                         points below / at / above in registers (register reuse along z)
// Inputs: in (nx*ny*nz floats, uniform random), out (same size).

__global__ void stencil3d_7pt(const float *__restrict__ in, float *__restrict__ out,
                              int nx, int ny, int nz, float c0, float c1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1)
        return;
    const long long plane = (long long)nx * ny;
    const long long i = z * plane + (long long)y * nx + x;
    const float around = in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane];
    out[i] = c0 * in[i] + c1 * around;
}

__global__ void stencil3d_7pt_zmarch(const float *__restrict__ in, float *__restrict__ out,
                                     int nx, int ny, int nz, float c0, float c1)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    const long long plane = (long long)nx * ny;
    const long long base = (long long)y * nx + x;
    float below = in[base];
    float centre = in[base + plane];
    for (int z = 1; z < nz - 1; ++z) {
        const long long c = base + z * plane;
        const float above = in[c + plane];
        const float around = in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx] + below + above;
        out[c] = c0 * centre + c1 * around;
        below = centre;
        centre = above;
    }
}
