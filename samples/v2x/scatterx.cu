// Warpline validation suite v2x (tuning supplement), family "scatterx": stores whose addresses
// are not the threads' order.
//   transpose_naive    : out[x * ny + y] = in[y * nx + x]: coalesced reads, column-wise stores
//   transpose_tiled    : the same through a 32 x 33 shared tile, both sides coalesced
//                        (blocks of 32 x 8 threads, four rows each)
//   scatter_random     : out[idx[i]] = src[i], idx uniform random (collisions: last writer wins)
//   scatter_add_random : atomicAdd(&out[idx[i]], src[i]) at the same random slots
// Inputs: in / src uniform random floats; idx uniform random ints in [0, n); out floats.

__global__ void transpose_naive(const float *__restrict__ in, float *__restrict__ out, int nx, int ny)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < nx && y < ny)
        out[(long long)x * ny + y] = in[(long long)y * nx + x];
}

__global__ void transpose_tiled(const float *__restrict__ in, float *__restrict__ out, int nx, int ny)
{
    __shared__ float tile[32][33];
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y0 = blockIdx.y * 32;
    for (int j = threadIdx.y; j < 32; j += blockDim.y)
        if (x < nx && y0 + j < ny)
            tile[j][threadIdx.x] = in[(long long)(y0 + j) * nx + x];
    __syncthreads();
    const int ox = y0 + threadIdx.x;
    const int oy0 = blockIdx.x * 32;
    for (int j = threadIdx.y; j < 32; j += blockDim.y)
        if (ox < ny && oy0 + j < nx)
            out[(long long)(oy0 + j) * ny + ox] = tile[threadIdx.x][j];
}

__global__ void scatter_random(const float *__restrict__ src, const int *__restrict__ idx,
                               float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[idx[i]] = src[i];
}

__global__ void scatter_add_random(const float *__restrict__ src, const int *__restrict__ idx,
                                   float *__restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[idx[i]], src[i]);
}
