// Warpline validation suite v2, family "nbody": all-pairs gravitational accelerations of n
// bodies (float4: x, y, z, mass), softened by eps2.
//   nbody_tiled : bodies staged blockDim.x at a time in dynamic shared memory
//                 (blockDim.x float4 = 16*blockDim.x bytes), every thread reads each staged body
//   nbody_naive : every thread reads every body from global memory (the whole warp reads the
//                 same body at once, so the reads broadcast from L1)
// Inputs: pos uniform random in [0.1, 1.1); acc float4.

__global__ void nbody_tiled(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n, float eps2)
{
    extern __shared__ float4 tile[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 p = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int t = 0; t < blockDim.x; ++t) {
            const float4 q = tile[t];
            const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            const float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
            const float f = q.w * inv * inv * inv;
            ax += dx * f;
            ay += dy * f;
            az += dz * f;
        }
        __syncthreads();
    }
    if (i < n)
        acc[i] = make_float4(ax, ay, az, 0.0f);
}

__global__ void nbody_naive(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n, float eps2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float4 q = pos[j];
        const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        const float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
        const float f = q.w * inv * inv * inv;
        ax += dx * f;
        ay += dy * f;
        az += dz * f;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
