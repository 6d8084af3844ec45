// Whether the SM's arithmetic pipes belong to its schedulers (SMSPs) or to the whole SM.
//
// Each kernel runs 8 independent chains of one operation per warp (MUFU.RSQ, DFMA, HMMA or FFMA),
// in one of two modes per block size (1, 2 or 4 warps per block, 64 warps per SM where the block
// limit allows):
//   even:        every warp of the block does 1/WPB of the block's work;
//   warp0_only:  warp 0 of the block does all of it, the others wait at the closing barrier.
// Blocks of 2 warps put every block's warp 0 on schedulers 0 and 2 (the rule of
// warp_schedulers.cu), so warp0_only keeps two of the four schedulers busy. If a pipe is the
// SM's, those two schedulers can still feed it at its full rate when it is slower than their
// issue (MUFU: 16 lanes per SM, DFMA: 64, HMMA: 4 tensor cores): warp0_only takes about as long as
// even. If each scheduler has its own (4 MUFU lanes, 16 DFMA lanes, one tensor core), only half
// of them work and warp0_only takes twice as long. FFMA is the reference: issue-bound either way.
//
// Build: nvcc -O3 -arch=sm_90 -o pipe_schedulers pipe_schedulers.cu
// Run:   ./pipe_schedulers > pipe_schedulers.csv   (tools/device/measure_pipe_schedulers.sh)
#include <cstdio>
#include <cuda_runtime.h>

enum Pipe { SFU = 0, DFMA = 1, HMMA = 2, FFMA = 3 };

template <int PIPE>
__device__ __forceinline__ float chains(int n)
{
    if (PIPE == SFU) {
        float x[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = 1.5f + threadIdx.x + k;
        for (int i = 0; i < n; ++i) {
#pragma unroll
            for (int k = 0; k < 8; ++k) asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x[k]));
        }
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k) s += x[k];
        return s;
    } else if (PIPE == DFMA) {
        double x[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = threadIdx.x + k;
        for (int i = 0; i < n; ++i) {
#pragma unroll
            for (int k = 0; k < 8; ++k) asm volatile("fma.rn.f64 %0, %0, 0d3FEFFF2E48E8A71E, 0d3FE0000000000000;" : "+d"(x[k]));
        }
        double s = 0.0;
#pragma unroll
        for (int k = 0; k < 8; ++k) s += x[k];
        return (float)s;
    } else if (PIPE == HMMA) {
        // four independent m16n8k16 accumulators (f16 inputs, f32 accumulation), two MMAs each
        // per pass: 8 HMMA.16816.F32 per pass, like the 8 chains of the other pipes
        unsigned a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, b0 = a0 ^ 5, b1 = a0 ^ 9;
        float c[4][4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int k = 0; k < 4; ++k) c[j][k] = 0.0f;
        for (int i = 0; i < n; ++i) {
#pragma unroll
            for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                                 : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int k = 0; k < 4; ++k) s += c[j][k];
        return s;
    } else {
        float x[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = threadIdx.x + k;
        for (int i = 0; i < n; ++i) {
#pragma unroll
            for (int k = 0; k < 8; ++k) asm volatile("fma.rn.f32 %0, %0, 0f3F7FF972, 0f3F000000;" : "+f"(x[k]));
        }
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 8; ++k) s += x[k];
        return s;
    }
}

template <int PIPE, bool WARP0_ONLY>
__global__ void k_pipe(float *out, int iters)
{
    const int w = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int mine = WARP0_ONLY ? (w == 0 ? iters : 0) : iters / wpb;
    const float s = chains<PIPE>(mine);
    __syncthreads();
    if (s == 12345.0f) out[blockIdx.x] = s;
}

template <int PIPE>
static float timed(bool warp0_only, int blocks, int threads, int iters, float *out)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int rep = 0; rep < 4; ++rep) {
        cudaEventRecord(e0);
        if (warp0_only) k_pipe<PIPE, true><<<blocks, threads>>>(out, iters);
        else k_pipe<PIPE, false><<<blocks, threads>>>(out, iters);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0 && ms < best) best = ms;   // the first launch warms up
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

template <int PIPE>
static void measure(const char *name, int sms, int iters, float *out)
{
    const int wpbs[] = {1, 2, 4};
    for (int wpb : wpbs) {
        const int per_sm = (64 / wpb) > 32 ? 32 : 64 / wpb;   // at most 32 blocks per SM
        const int blocks = sms * per_sm * 4;                  // four waves
        for (int mode = 0; mode < 2; ++mode) {
            const float ms = timed<PIPE>(mode == 1, blocks, wpb * 32, iters, out);
            printf("pipe,%s,wpb,%d,mode,%s,blocks,%d,iters,%d,ms,%.4f,%s\n", name, wpb,
                   mode ? "warp0_only" : "even", blocks, iters, ms, cudaGetErrorString(cudaGetLastError()));
        }
    }
}

int main()
{
    int sms = 0, clock_khz = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    printf("device,sms,%d,clock_khz,%d\n", sms, clock_khz);
    float *out;
    cudaMalloc(&out, 1 << 24);
    measure<SFU>("mufu_rsq", sms, 256, out);
    measure<DFMA>("dfma", sms, 512, out);
    measure<HMMA>("hmma_16816_f32", sms, 256, out);
    measure<FFMA>("ffma", sms, 1024, out);
    cudaFree(out);
    return 0;
}
