// Warpline microbenchmark: stores and atomic adds at random 4-byte slots, and what they cost DRAM.
// Run under Nsight Compute (it cleans L2 before each kernel), reading dram__bytes_read.sum,
// dram__bytes_write.sum and gpc__cycles_elapsed.max per launch:
//   ncu --csv --metrics dram__bytes_write.sum,dram__bytes_read.sum,gpc__cycles_elapsed.max ./store_scatter
// For each footprint F (MB) one launch of each kernel, F / 4 threads, thread i writing one float
// at slot hash(i) mod (F / 4): independent uniform slots (collisions allowed), nothing read but
// the kernel's own arguments:
//   k_scatter_store : out[slot] = value           (a partial-sector store at a random place)
//   k_scatter_red   : atomicAdd(&out[slot], value) (compiled to RED.ADD: no value returned)
// Blocks of 256 threads, one thread per store. Stdout lists the launches in the order ncu sees them.
//
// Build: nvcc -O3 -arch=sm_90 -o store_scatter store_scatter.cu

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

__device__ __forceinline__ unsigned mix(unsigned x) {
    // a 32-bit finaliser: consecutive i land on unrelated slots
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

__global__ void k_scatter_store(float* __restrict__ out, unsigned slots, unsigned n, float v) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[mix(i) % slots] = v;
}

__global__ void k_scatter_red(float* __restrict__ out, unsigned slots, unsigned n, float v) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[mix(i) % slots], v);
}

int main() {
    const int sizes_mb[] = {4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256};
    const int n_sizes = sizeof(sizes_mb) / sizeof(sizes_mb[0]);
    const size_t max_bytes = (size_t)256 << 20;
    float* a;
    CK(cudaMalloc(&a, max_bytes));
    CK(cudaMemset(a, 0, max_bytes));
    CK(cudaDeviceSynchronize());
    printf("launch,kernel,mb,stores\n");
    int launch = 0;
    for (int kernel = 0; kernel < 2; kernel++) {
        for (int k = 0; k < n_sizes; k++) {
            const unsigned slots = (unsigned)(((size_t)sizes_mb[k] << 20) / sizeof(float));
            const unsigned blocks = (slots + 255) / 256;
            if (kernel == 0) k_scatter_store<<<blocks, 256>>>(a, slots, slots, 1.0f + k);
            else k_scatter_red<<<blocks, 256>>>(a, slots, slots, 1.0f);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            printf("%d,%s,%d,%u\n", launch++, kernel == 0 ? "k_scatter_store" : "k_scatter_red", sizes_mb[k], slots);
        }
    }
    CK(cudaFree(a));
    return 0;
}
