// Warpline microbenchmark: what Nsight Compute's L1 sector hit rate (l1tex__t_sector_hit_rate)
// counts for stores and local memory. Four kernels over 16 M floats, 256 threads a block:
//   store_coalesced   each lane stores one float, a warp 4 sectors of one line
//   store_strided     each lane stores one float 33 floats from its neighbour (32 lines a request)
//   store_then_load   each lane stores a float and loads it back after a barrier (same address)
//   load_coalesced    each lane loads one float (the reference: every sector a miss)
//   local_sort8       each thread sorts 8 values in a local array indexed by a loop variable
//   red_coalesced     each lane adds 1 to one float (a RED), a warp 4 sectors of one line
//   load_then_red     each lane loads a float, adds it back with a RED, and loads it again
// Stdout: one line per launch (the order ncu sees them).
//
// Build: nvcc -O3 -arch=sm_90 -o l1_store_hits l1_store_hits.cu

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

static const size_t N = 16u << 20;

__global__ void store_coalesced(float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)i;
}

__global__ void store_strided(float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t j = (i / 32) * 32 * 33 % n + (i % 32) * 33;
    if (j < n) out[j] = (float)i;
}

__global__ void store_then_load(float* out, float* sink, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)i * 0.5f;
    __syncthreads();
    float v = i < n ? out[i] : 0.f;
    if (v == -1.f) sink[0] = v;
}

__global__ void load_coalesced(const float* in, float* sink, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.f;
    if (v == -1.f) sink[0] = v;
}

__global__ void red_coalesced(float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out + i, 1.0f);
}

__global__ void load_then_red(float* out, float* sink, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float v = i < n ? out[i] : 0.f;
    if (i < n) atomicAdd(out + i, v);
    v = i < n ? out[i] : 0.f;          // after the RED: does L1 still hold the line?
    if (v == -1.f) sink[0] = v;
}

__global__ void local_sort8(const float* in, float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i * 8 + 7 >= n) return;
    float a[8];
    for (int k = 0; k < 8; ++k) a[k] = in[i * 8 + k];
    for (int p = 1; p < 8; ++p) {          // insertion sort: a[] indexed by loop variables lives in local memory
        float x = a[p];
        int q = p - 1;
        while (q >= 0 && a[q] > x) { a[q + 1] = a[q]; --q; }
        a[q + 1] = x;
    }
    for (int k = 0; k < 8; ++k) out[i * 8 + k] = a[k];
}

int main() {
    float *a, *b, *sink;
    CK(cudaMalloc(&a, N * sizeof(float)));
    CK(cudaMalloc(&b, N * sizeof(float)));
    CK(cudaMalloc(&sink, 64));
    CK(cudaMemset(a, 0, N * sizeof(float)));
    const int t = 256;
    const unsigned g = (unsigned)((N + t - 1) / t);
    printf("launch,kernel\n");
    for (int rep = 0; rep < 2; ++rep) {
        store_coalesced<<<g, t>>>(a, N); printf("%d,store_coalesced\n", rep);
        store_strided<<<g, t>>>(a, N); printf("%d,store_strided\n", rep);
        store_then_load<<<g, t>>>(a, sink, N); printf("%d,store_then_load\n", rep);
        load_coalesced<<<g, t>>>(a, sink, N); printf("%d,load_coalesced\n", rep);
        local_sort8<<<g / 8, t>>>(a, b, N); printf("%d,local_sort8\n", rep);
        red_coalesced<<<g, t>>>(a, N); printf("%d,red_coalesced\n", rep);
        load_then_red<<<g, t>>>(a, sink, N); printf("%d,load_then_red\n", rep);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
