// Which of the SM's four schedulers (SMSPs) a warp issues through, and whether a block's warps
// land on the same ones block after block. Two parts, one launch each per block size:
//  map:   lane 0 of every warp records (SM, %warpid, block, warp of block, start clock); the host
//         prints SM 0's rows. %warpid is the warp's slot on its SM, and slot mod 4 its scheduler.
//  skew:  only warp 0 of each block works (an issue-bound run of independent FMAs); the other
//         warps wait at the block's closing barrier. If every block's warp 0 sits on the same
//         scheduler(s), the run takes longer than when the same work is spread over all warps
//         (part "even": every warp does 1/WPB of it).
// Build: nvcc -O3 -arch=sm_90 -o skew source_skew.cu ; run: ./skew (README.md)
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned warpid() { unsigned r; asm volatile("mov.u32 %0, %%warpid;" : "=r"(r)); return r; }

__global__ void k_map(unsigned long long *rows, int work)
{
    const int w = threadIdx.x >> 5;
    const long long t0 = clock64();
    float a = threadIdx.x, b = 1.0f;
    for (int i = 0; i < work; ++i) { a = fmaf(a, 0.999f, b); b = fmaf(b, 0.999f, a); }
    if ((threadIdx.x & 31) == 0) {
        const unsigned long long g = (unsigned long long)blockIdx.x * (blockDim.x >> 5) + w;
        rows[g * 4 + 0] = smid();
        rows[g * 4 + 1] = warpid();
        rows[g * 4 + 2] = (unsigned long long)t0;
        rows[g * 4 + 3] = (unsigned long long)(a + b == 12345.0f);
    }
}

// ITER rounds of 8 independent FMA chains: about 8 FMAs per 8 issue cycles, issue-bound on one
// scheduler when enough warps share it
template <bool skew>
__global__ void k_skew(float *out, int iters)
{
    const int w = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int mine = skew ? (w == 0 ? iters : 0) : iters / wpb;
    float x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = threadIdx.x + k;
    for (int i = 0; i < mine; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = fmaf(x[k], 0.9999f, 0.5f);
    }
    __syncthreads();
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += x[k];
    if (s == 12345.0f) out[blockIdx.x] = s;
}

int main()
{
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    float *out; cudaMalloc(&out, 1 << 24);
    const int wpbs[] = {1, 2, 3, 4, 8};
    for (int wpb : wpbs) {
        const int blocks = sms * 64 / wpb * 3;           // three waves at 64 warps per SM
        unsigned long long *rows;
        cudaMalloc(&rows, (size_t)blocks * wpb * 4 * 8);
        k_map<<<blocks, wpb * 32>>>(rows, 2000);
        cudaDeviceSynchronize();
        unsigned long long *h = (unsigned long long *)malloc((size_t)blocks * wpb * 4 * 8);
        cudaMemcpy(h, rows, (size_t)blocks * wpb * 4 * 8, cudaMemcpyDeviceToHost);
        for (long long g = 0; g < (long long)blocks * wpb; ++g)
            if (h[g * 4] == 0)
                printf("map,wpb,%d,block,%lld,warp,%lld,warpid,%llu,start,%llu\n", wpb, g / wpb, g % wpb, h[g * 4 + 1], h[g * 4 + 2]);
        free(h); cudaFree(rows);
        for (int skew = 0; skew < 2; ++skew) {
            const int blocks2 = sms * (64 / wpb) * 8;
            float ms = 0.0f;
            for (int rep = 0; rep < 3; ++rep) {
                cudaEventRecord(e0);
                if (skew) k_skew<true><<<blocks2, wpb * 32>>>(out, 4096);
                else k_skew<false><<<blocks2, wpb * 32>>>(out, 4096);
                cudaEventRecord(e1);
                cudaEventSynchronize(e1);
                cudaEventElapsedTime(&ms, e0, e1);
            }
            printf("skew,wpb,%d,%s,blocks,%d,ms,%.4f,%s\n", wpb, skew ? "warp0_only" : "even", blocks2, ms,
                   cudaGetErrorString(cudaGetLastError()));
        }
    }
    return 0;
}
