// Warpline validation suite v3, family "mesh": unstructured-mesh loops.
//   euler_cell_flux : residual of the 3-D Euler equations on a tetrahedral mesh, cell-centred finite
//                     volumes with a Rusanov (local Lax-Friedrichs) flux. Conserved variables:
//                     density[cell], momentum mom[d * ncells + cell] (d = x, y, z), energy
//                     energy[cell]. Face f of a cell has the neighbour index nb[f * ncells + cell]; a
//                     negative index is a boundary face: -1 a slip wall (pressure only), any other
//                     negative value the far field (the free-stream state, five arguments). Face normals
//                     (area-weighted) are normals[(f * 3 + d) * ncells + cell].
//   edge_flux_atomic: edge-based diffusion residual: edge e joins nodes ends[2e] and ends[2e + 1]; its
//                     flux w[e] (u[b] - u[a]) is added to node a and subtracted from node b with
//                     atomics
//   mesh_smooth_csr : one Jacobi sweep of Laplacian smoothing: every node moves towards the mean of
//                     its neighbours (CSR adjacency), coordinates stored x, y, z variable-major
// Inputs: random states and normals, random neighbour / node indices (a share of boundary faces).

__device__ __forceinline__ float euler_pressure(float rho, float mx, float my, float mz, float e, float gamma)
{
    return (gamma - 1.0f) * (e - 0.5f * (mx * mx + my * my + mz * mz) / rho);
}

__global__ void euler_cell_flux(const float *__restrict__ density, const float *__restrict__ mom,
                                const float *__restrict__ energy, const int *__restrict__ nb,
                                const float *__restrict__ normals, float *__restrict__ res, int ncells, float gamma,
                                float ff_rho, float ff_mx, float ff_my, float ff_mz, float ff_e)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ncells)
        return;
    const float rho = density[i], mx = mom[i], my = mom[ncells + i], mz = mom[2 * ncells + i];
    const float e = energy[i];
    const float p = euler_pressure(rho, mx, my, mz, e, gamma);
    const float ux = mx / rho, uy = my / rho, uz = mz / rho;
    const float c = sqrtf(gamma * p / rho);
    float r0 = 0.0f, r1 = 0.0f, r2 = 0.0f, r3 = 0.0f, r4 = 0.0f;
    for (int f = 0; f < 4; ++f) {
        const int j = nb[f * ncells + i];
        const float nx = normals[(f * 3 + 0) * ncells + i];
        const float ny = normals[(f * 3 + 1) * ncells + i];
        const float nz = normals[(f * 3 + 2) * ncells + i];
        const float area = sqrtf(nx * nx + ny * ny + nz * nz);
        if (j == -1) {
            r1 += p * nx;
            r2 += p * ny;
            r3 += p * nz;
            continue;
        }
        float rho_o, mx_o, my_o, mz_o, e_o;
        if (j >= 0) {
            rho_o = density[j];
            mx_o = mom[j];
            my_o = mom[ncells + j];
            mz_o = mom[2 * ncells + j];
            e_o = energy[j];
        } else {
            rho_o = ff_rho;
            mx_o = ff_mx;
            my_o = ff_my;
            mz_o = ff_mz;
            e_o = ff_e;
        }
        const float p_o = euler_pressure(rho_o, mx_o, my_o, mz_o, e_o, gamma);
        const float vn = ux * nx + uy * ny + uz * nz;
        const float vn_o = (mx_o * nx + my_o * ny + mz_o * nz) / rho_o;
        const float c_o = sqrtf(gamma * p_o / rho_o);
        const float smax = fmaxf(fabsf(vn) + c * area, fabsf(vn_o) + c_o * area);
        r0 += 0.5f * (rho * vn + rho_o * vn_o) - 0.5f * smax * (rho_o - rho);
        r1 += 0.5f * (mx * vn + p * nx + mx_o * vn_o + p_o * nx) - 0.5f * smax * (mx_o - mx);
        r2 += 0.5f * (my * vn + p * ny + my_o * vn_o + p_o * ny) - 0.5f * smax * (my_o - my);
        r3 += 0.5f * (mz * vn + p * nz + mz_o * vn_o + p_o * nz) - 0.5f * smax * (mz_o - mz);
        r4 += 0.5f * ((e + p) * vn + (e_o + p_o) * vn_o) - 0.5f * smax * (e_o - e);
    }
    res[i] = r0;
    res[ncells + i] = r1;
    res[2 * ncells + i] = r2;
    res[3 * ncells + i] = r3;
    res[4 * ncells + i] = r4;
}

__global__ void edge_flux_atomic(const int *__restrict__ ends, const float *__restrict__ w,
                                 const float *__restrict__ u, float *__restrict__ res, int nedges)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nedges)
        return;
    const int a = ends[2 * e], b = ends[2 * e + 1];
    const float flux = w[e] * (u[b] - u[a]);
    atomicAdd(&res[a], flux);
    atomicAdd(&res[b], -flux);
}

__global__ void mesh_smooth_csr(const int *__restrict__ adj_ptr, const int *__restrict__ adj,
                                const float *__restrict__ xyz, float *__restrict__ xyz_new, int nnodes, float relax)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nnodes)
        return;
    const int first = adj_ptr[v], end = adj_ptr[v + 1];
    float sx = 0.0f, sy = 0.0f, sz = 0.0f;
    for (int e = first; e < end; ++e) {
        const int u = adj[e];
        sx += xyz[u];
        sy += xyz[nnodes + u];
        sz += xyz[2 * nnodes + u];
    }
    const float inv = 1.0f / (float)max(end - first, 1);
    xyz_new[v] = (1.0f - relax) * xyz[v] + relax * sx * inv;
    xyz_new[nnodes + v] = (1.0f - relax) * xyz[nnodes + v] + relax * sy * inv;
    xyz_new[2 * nnodes + v] = (1.0f - relax) * xyz[2 * nnodes + v] + relax * sz * inv;
}
