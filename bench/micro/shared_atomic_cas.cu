// Shared-memory float atomicAdd: ptxas makes it a compare-and-swap retry loop
// (LDS, FADD, ATOMS.CAST.SPIN, ISETP, BRA back while the swap failed). How many passes a warp
// makes depends on which words and banks its lanes update and on the block's other warps; this
// measures it per address pattern and block size. Nsight Compute counts the executed
// instructions (smsp__inst_executed) and cycles of each launch; the launch names the case:
//   grid 132 blocks (one per SM), `iters` atomics per thread, one pattern per launch.
// Patterns (word index of lane l of warp w in iteration i, over a 4096-float array):
//   0 own:        w*32 + l            every lane its own word, 32 banks, no sharing
//   1 warp_word:  w                   a warp's lanes on one word, warps on different words
//   2 block_word: 0                   every lane of the block on one word
//   3 one_bank:   l*32 + w            distinct words, all a warp's lanes in one bank
//   4 pairs:      w*32 + l/2          two lanes per word, 16 banks
//   5 rand16x16:  r%16*16 + i%16      kmeans-like: 16 words 16 apart (2 banks), random per lane
//   6 rand64x64:  r%64*64 + i%64      64 words 64 apart (one bank), random per lane
//   7 shared32:   l                   the block's warps all on the same 32 words (one per bank)
//   8 rand256:    r%256               random over 256 consecutive words
//   9 one_bank2:  (l/2)*32            16 words of one bank, two lanes each
// Build: nvcc -O3 -arch=sm_90 -o shared_atomic_cas shared_atomic_cas.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned mix(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

__global__ void shared_atomic(float *out, int pattern, int iters)
{
    __shared__ float words[4096];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x)
        words[i] = 0.0f;
    __syncthreads();
    const int l = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int i = 0; i < iters; ++i) {
        const unsigned r = mix(threadIdx.x * 7919u + i * 104729u + blockIdx.x * 15485863u);
        int k;
        switch (pattern) {
        case 0: k = w * 32 + l; break;
        case 1: k = w; break;
        case 2: k = 0; break;
        case 3: k = l * 32 + w; break;
        case 4: k = w * 32 + l / 2; break;
        case 5: k = (r % 16) * 16 + i % 16; break;
        case 6: k = (r % 64) * 64 + i % 64; break;
        case 7: k = l; break;
        case 8: k = r % 256; break;
        default: k = (l / 2) * 32; break;
        }
        atomicAdd(&words[k & 4095], 1.0f);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = words[0] + words[4095];
}

// the same loop without the atomic (a plain shared add): what the loop costs without retries
__global__ void shared_plain(float *out, int pattern, int iters)
{
    __shared__ float words[4096];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x)
        words[i] = 0.0f;
    __syncthreads();
    const int l = threadIdx.x & 31, w = threadIdx.x >> 5;
    float acc = 0.0f;
    for (int i = 0; i < iters; ++i) {
        const unsigned r = mix(threadIdx.x * 7919u + i * 104729u + blockIdx.x * 15485863u);
        int k;
        switch (pattern) {
        case 0: k = w * 32 + l; break;
        case 1: k = w; break;
        case 2: k = 0; break;
        case 3: k = l * 32 + w; break;
        case 4: k = w * 32 + l / 2; break;
        case 5: k = (r % 16) * 16 + i % 16; break;
        case 6: k = (r % 64) * 64 + i % 64; break;
        case 7: k = l; break;
        case 8: k = r % 256; break;
        default: k = (l / 2) * 32; break;
        }
        acc += words[k & 4095];
    }
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = acc;
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 256;
    float *out;
    cudaMalloc(&out, 132 * sizeof(float));
    const int blocks[] = {32, 128, 256, 512};
    for (int plain = 0; plain < 2; ++plain)
        for (int b : blocks)
            for (int p = 0; p < 10; ++p) {
                if (plain)
                    shared_plain<<<132, b>>>(out, p, iters);
                else
                    shared_atomic<<<132, b>>>(out, p, iters);
                cudaError_t e = cudaDeviceSynchronize();
                printf("%s,%d,%d,%d,%s\n", plain ? "plain" : "atomic", b, p, iters, cudaGetErrorString(e));
            }
    cudaFree(out);
    return 0;
}
