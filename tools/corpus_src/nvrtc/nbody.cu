// Corpus (NVRTC): all-pairs gravitational accelerations with shared-memory tiles.
extern "C" __global__ void nbody_accel(const float4 *pos, float4 *acc, int n, float soft2)
{
    extern __shared__ float4 tile[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 me = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int base = 0; base < n; base += blockDim.x) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll 4
        for (int k = 0; k < blockDim.x; ++k) {
            const float4 o = tile[k];
            const float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
            const float r2 = dx * dx + dy * dy + dz * dz + soft2;
            const float inv = rsqrtf(r2);
            const float s = o.w * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.f);
}
