// Warpline sample: instruction-mix microbenchmark (Pipeline model, section 4.2 / 6.1).
//
// Each thread repeats a group of BETA dependent FP32 ALU instructions followed by
// one SFU instruction.  The chain is serial inside a thread (every instruction
// uses the previous result), so throughput comes only from running many warps at
// once: the benchmark shows where the ALU/SFU issue limits meet as BETA changes.
// The group is unrolled INNER times per loop trip, the loop runs `reps` times.
//
// Kernels (one per BETA, as the benchmark sweeps it):
//   mix_alu_sfu<1>, <2>, <4>, <8>   (template; mangled names in the launch file)
//   alu_only, sfu_only               (the two end points)

#define INNER 16

template <int BETA>
__device__ __forceinline__ float alu_group(float x, float a, float b)
{
#pragma unroll
    for (int i = 0; i < BETA; ++i)
        x = fmaf(x, a, b);          // FP32 ALU: fma.rn.f32
    return x;
}

template <int BETA>
__global__ void mix_alu_sfu(float *out, int reps, float a, float b)
{
    float x = (float)(blockIdx.x * blockDim.x + threadIdx.x) * 1.0e-6f;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int j = 0; j < INNER; ++j) {
            x = alu_group<BETA>(x, a, b);
            x = __sinf(x);           // SFU: sin.approx.f32
        }
    }
    // Store so the chain is not removed as dead code.
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

__global__ void alu_only(float *out, int reps, float a, float b)
{
    float x = (float)threadIdx.x;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int j = 0; j < INNER; ++j)
            x = fmaf(x, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

__global__ void sfu_only(float *out, int reps)
{
    float x = (float)threadIdx.x * 1.0e-3f;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int j = 0; j < INNER; ++j)
            x = __expf(x) * 0.5f;      // ex2.approx.f32 plus its pre-scale multiply
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

template __global__ void mix_alu_sfu<1>(float *, int, float, float);
template __global__ void mix_alu_sfu<2>(float *, int, float, float);
template __global__ void mix_alu_sfu<4>(float *, int, float, float);
template __global__ void mix_alu_sfu<8>(float *, int, float, float);
