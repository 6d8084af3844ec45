// Warpline microbenchmark: how much of L2 a buffer accessed at random can use, by the kind of
// access. H100's L2 is two partitions; a line that SMs on both sides read may be held on both
// sides, while atomics are resolved at the line's home slice. Every kernel touches one buffer of
// S megabytes (S from 8 to 96) at uniformly random 4-byte words (a multiplicative hash of thread
// and step), ITERS per thread, on a full grid (8 blocks of 256 threads per SM):
//   gather : sum += buf[h]                (LDG)
//   own    : sum += __ldcg(buf + slice * block + h), h within the block's own slice of S / grid:
//            each line read by one SM only (L1 bypassed)
//   red    : atomicAdd(&buf[h], 1.0f)     (result unused: RED)
//   atom   : sum += atomicAdd(&buf[h], 1) (result used: ATOM)
//   store  : buf[h] = value               (STG)
//   mixed  : sum = a[h1]; atomicAdd(&b[h2], sum): a gather of one half-size buffer and atomics
//            on another (an edge loop over a mesh), S the two together
// Each kernel runs twice on each size with different seeds: the first launch fills L2, the
// second is the one to read (Nsight Compute with cache control off keeps L2 between launches).
// Stdout lists the launches in the order ncu sees them.
//
// Build: nvcc -O3 -arch=sm_90 -o l2_kinds l2_kinds.cu

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static const int ITERS = 32;

// a word index in [0, n): the high half of a 32x32-bit product of a mixed hash and n
__device__ __forceinline__ unsigned pick(unsigned thread, unsigned step, unsigned seed, unsigned n) {
    unsigned x = thread * 0x9E3779B1u ^ (step + seed) * 0x85EBCA77u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return (unsigned)(((unsigned long long)x * n) >> 32);
}

__global__ void k_gather(const float* __restrict__ buf, unsigned n, unsigned seed, float* sink) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) acc += buf[pick(t, s, seed, n)];
    if (acc == 1.2345f) sink[0] = acc;
}

__global__ void k_own(const float* __restrict__ buf, unsigned slice, unsigned seed, float* sink) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const float* mine = buf + (size_t)slice * blockIdx.x;
    float acc = 0.f;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) acc += __ldcg(mine + pick(t, s, seed, slice));
    if (acc == 1.2345f) sink[0] = acc;
}

__global__ void k_red(float* buf, unsigned n, unsigned seed) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) atomicAdd(buf + pick(t, s, seed, n), 1.0f);
}

__global__ void k_atom(unsigned* buf, unsigned n, unsigned seed, unsigned* sink) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) acc += atomicAdd(buf + pick(t, s, seed, n), 1u);
    if (acc == 12345u) sink[0] = acc;
}

__global__ void k_store(float* buf, unsigned n, unsigned seed) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) buf[pick(t, s, seed, n)] = (float)(t + s);
}

__global__ void k_mixed(const float* __restrict__ a, float* b, unsigned n_half, unsigned seed) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 4
    for (int s = 0; s < ITERS; ++s) {
        const float v = a[pick(t, s, seed, n_half)];
        atomicAdd(b + pick(t, s, seed ^ 0x5bd1e995u, n_half), v);
    }
}

int main() {
    int dev = 0, sms = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int sizes_mb[] = {8, 16, 24, 32, 40, 48, 64, 96};
    const size_t max_bytes = (size_t)96 << 20;
    float *buf, *buf2, *sink;
    CK(cudaMalloc(&buf, max_bytes));
    CK(cudaMalloc(&buf2, max_bytes));
    CK(cudaMalloc(&sink, 64));
    CK(cudaMemset(buf, 0, max_bytes));
    CK(cudaMemset(buf2, 0, max_bytes));
    const int grid = sms * 8, block = 256;
    const size_t accesses = (size_t)grid * block * ITERS;
    printf("launch,kernel,size_mb,role,grid,block,accesses\n");
    int order = 0;
    for (int mb : sizes_mb) {
        const unsigned n = (unsigned)(((size_t)mb << 20) / 4);
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            const unsigned seed = 1000u * mb + rep;
            k_gather<<<grid, block>>>(buf, n, seed, sink);
            printf("%d,gather,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, accesses);
        }
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            k_own<<<grid, block>>>(buf, n / grid, 1500u * mb + rep, sink);
            printf("%d,own,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, accesses);
        }
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            k_red<<<grid, block>>>(buf, n, 2000u * mb + rep);
            printf("%d,red,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, accesses);
        }
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            k_atom<<<grid, block>>>((unsigned*)buf, n, 3000u * mb + rep, (unsigned*)sink);
            printf("%d,atom,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, accesses);
        }
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            k_store<<<grid, block>>>(buf, n, 4000u * mb + rep);
            printf("%d,store,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, accesses);
        }
        for (int rep = 0; rep < 2; ++rep) {
            const char* role = rep ? "measured" : "fill";
            k_mixed<<<grid, block>>>(buf, buf2, n / 2, 5000u * mb + rep);
            printf("%d,mixed,%d,%s,%d,%d,%zu\n", order++, mb, role, grid, block, 2 * accesses);
        }
    }
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    return 0;
}
