// Warpline validation suite v2, family "reduction": float sums.
//   reduce_warp_shfl : grid-stride accumulation, warp-shuffle tree, one shared slot per warp,
//                      a second shuffle tree in warp 0, one atomicAdd per block into out[0]
//   reduce_smem_tree : each thread adds two elements, then a shared-memory tree with
//                      __syncthreads (dynamic shared memory of blockDim.x floats); out[block]
// Inputs: in (n uniform random floats), out (zeroed; one float per block for the tree).

__device__ __forceinline__ float warp_sum_down(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void reduce_warp_shfl(const float *__restrict__ in, float *out, int n)
{
    __shared__ float partial[32];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += in[i];
    acc = warp_sum_down(acc);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0)
        partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        acc = lane < warps ? partial[lane] : 0.0f;
        acc = warp_sum_down(acc);
        if (lane == 0)
            atomicAdd(out, acc);
    }
}

__global__ void reduce_smem_tree(const float *__restrict__ in, float *__restrict__ out, int n)
{
    extern __shared__ float s[];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * (blockDim.x * 2) + tid;
    float v = 0.0f;
    if (i < n)
        v = in[i];
    if (i + (int)blockDim.x < n)
        v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (tid < step)
            s[tid] += s[tid + step];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}
