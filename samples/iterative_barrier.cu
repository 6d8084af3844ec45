// Warpline sample: iterative-barrier microbenchmark (Pipeline model, section 6.2).
//
// Every trip of the loop does one short dependent computation and then waits at
// a block-wide barrier, so the block advances in lock step: the time per trip is
// set by the slowest warp plus the barrier cost, which depends on the block
// (work-group) size.  `iterations` is a kernel argument so the loop trip count
// is only known at launch time.

__global__ void iterative_barrier(float *out, int iterations, float scale)
{
    float v = (float)threadIdx.x;
    for (int i = 0; i < iterations; ++i) {
        v = v * scale + 1.0f;     // one dependent computational instruction (fma)
        __syncthreads();          // barrier separating consecutive instructions
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Same shape but with the barrier result exchanged through shared memory, so
// the barrier is needed for correctness (a neighbour's value is read each trip).
__global__ void iterative_barrier_exchange(float *out, int iterations)
{
    extern __shared__ float ring[];
    const int t = threadIdx.x;
    const int n = blockDim.x;
    float v = (float)t;
    for (int i = 0; i < iterations; ++i) {
        ring[t] = v;
        __syncthreads();
        v = 0.5f * (v + ring[(t + 1) % n]);
        __syncthreads();
    }
    out[blockIdx.x * n + t] = v;
}
