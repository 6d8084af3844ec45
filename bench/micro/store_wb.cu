// Warpline microbenchmark: how many stored bytes reach DRAM during the kernel (L2 write-back).
// Run under Nsight Compute (it cleans L2 before each kernel), reading dram__bytes_write.sum and
// dram__bytes_read.sum per launch:
//   ncu --csv --metrics dram__bytes_write.sum,dram__bytes_read.sum,gpc__cycles_elapsed.max ./store_wb
// Three kernels, each at a range of sizes S (MB), one launch per size, in this order:
//   k_store  : S bytes of coalesced float4 stores into a fresh buffer (nothing read)
//   k_update : S bytes read and written in place (p[i] += 1: every line dirty after its read)
//   k_copy   : S bytes read from one buffer, S bytes written to another (a stencil's pattern)
// Every launch is one grid of 4 blocks of 256 threads per SM, grid-stride over the buffer.
// Stdout lists the launches (kernel, MB) in the order ncu sees them.
//
// Build: nvcc -O3 -arch=sm_90 -o store_wb store_wb.cu

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

__global__ void k_store(float4* __restrict__ out, size_t n, float v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = make_float4(v, v, v, v);
}

__global__ void k_update(float4* __restrict__ p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 x = p[i];
        p[i] = make_float4(x.x + 1.f, x.y + 1.f, x.z + 1.f, x.w + 1.f);
    }
}

__global__ void k_copy(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int sizes_mb[] = {2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96, 128, 256};
    const int n_sizes = sizeof(sizes_mb) / sizeof(sizes_mb[0]);
    const size_t max_bytes = (size_t)256 << 20;
    float4 *a, *b;
    CK(cudaMalloc(&a, max_bytes));
    CK(cudaMalloc(&b, max_bytes));
    CK(cudaMemset(a, 0, max_bytes));
    CK(cudaMemset(b, 0, max_bytes));
    CK(cudaDeviceSynchronize());
    const int blocks = 4 * sms, threads = 256;
    printf("launch,kernel,mb\n");
    int launch = 0;
    for (int k = 0; k < n_sizes; k++) {
        size_t n = ((size_t)sizes_mb[k] << 20) / sizeof(float4);
        k_store<<<blocks, threads>>>(a, n, 1.0f + k);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        printf("%d,k_store,%d\n", launch++, sizes_mb[k]);
    }
    for (int k = 0; k < n_sizes; k++) {
        size_t n = ((size_t)sizes_mb[k] << 20) / sizeof(float4);
        k_update<<<blocks, threads>>>(a, n);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        printf("%d,k_update,%d\n", launch++, sizes_mb[k]);
    }
    for (int k = 0; k < n_sizes; k++) {
        size_t n = ((size_t)sizes_mb[k] << 20) / sizeof(float4);
        k_copy<<<blocks, threads>>>(a, b, n);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        printf("%d,k_copy,%d\n", launch++, sizes_mb[k]);
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    return 0;
}
