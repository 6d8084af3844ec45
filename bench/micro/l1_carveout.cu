// Warpline microbenchmark: the L1 data capacity an SM has left beside the shared memory a launch
// asks for. One thread chases a random ring of nodes 128 B apart with ld.global.ca (warmed by two
// passes), in a block launched with D bytes of dynamic shared memory; the ring grows in 8 KB steps
// until every load misses L1. The knee of cycles per step over the ring's size is the L1 capacity
// the driver's carve-out for D leaves. D runs from none to the most a block may have (227 KB), and
// without D three ways: no attribute set, the carve-out preference 0 (the most L1), and 100 (the
// most shared memory).
// Stdout: CSV "mode,dynamic_smem_bytes,ring_bytes,cycles_per_step".
//
// Build: nvcc -O3 -arch=sm_90 -o l1_carveout l1_carveout.cu

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static const size_t STRIDE = 128;
static const int STEPS = 4096;

__global__ void k_make_ring(unsigned long long* big, const unsigned* perm, size_t n, int stride_words) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t from = perm[i], to = perm[(i + 1) % n];
        big[from * stride_words] = (unsigned long long)(big + to * stride_words);
    }
}

// MODE only makes separate kernels, so that an attribute set on one does not reach the others
template <int MODE>
__global__ void k_chase_smem(unsigned long long start, int warm, int steps, unsigned long long* sink,
                             long long* cycles, int smem_bytes) {
    extern __shared__ unsigned long long smem[];
    unsigned long long p = start;
    for (int i = 0; i < warm; ++i) p = __ldca((const unsigned long long*)p);
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) p = __ldca((const unsigned long long*)p);
    long long t1 = clock64();
    // the dynamic shared memory is allocated at launch whether or not it is used; touch it when there is some
    if (smem_bytes >= 8) {
        smem[0] = p;
        __syncthreads();
        p = smem[0];
    }
    sink[0] = p;
    cycles[0] = t1 - t0;
}

template <int MODE>
static double chase(unsigned long long* big, unsigned* d_perm, size_t bytes, size_t smem, std::mt19937& rng,
                    unsigned long long* d_sink, long long* d_cyc) {
    size_t n = bytes / STRIDE;
    std::vector<unsigned> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    CK(cudaMemcpy(d_perm, perm.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    k_make_ring<<<256, 256>>>(big, d_perm, n, (int)(STRIDE / 8));
    CK(cudaGetLastError());
    unsigned long long start = (unsigned long long)(big + (size_t)perm[0] * (STRIDE / 8));
    int warm = (int)(2 * n + 64);
    k_chase_smem<MODE><<<1, 1, smem>>>(start, warm, STEPS, d_sink, d_cyc, (int)smem);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long long cyc;
    CK(cudaMemcpy(&cyc, d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost));
    return (double)cyc / STEPS;
}

template <int MODE>
static void sweep(const char* mode, size_t smem, unsigned long long* big, unsigned* d_perm,
                  unsigned long long* d_sink, long long* d_cyc) {
    std::mt19937 rng(1234 + (unsigned)smem);
    for (size_t kb = 8; kb <= 320; kb += (kb < 256 ? 8 : 32)) {
        double c = chase<MODE>(big, d_perm, kb << 10, smem, rng, d_sink, d_cyc);
        printf("%s,%zu,%zu,%.3f\n", mode, smem, kb << 10, c);
    }
    fflush(stdout);
}

int main() {
    const size_t big_bytes = 512u << 10;
    unsigned long long* big;
    unsigned* d_perm;
    unsigned long long* d_sink;
    long long* d_cyc;
    CK(cudaMalloc(&big, big_bytes));
    CK(cudaMalloc(&d_perm, (big_bytes / STRIDE) * sizeof(unsigned)));
    CK(cudaMalloc(&d_sink, 64));
    CK(cudaMalloc(&d_cyc, 64));
    int max_optin = 0;
    CK(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    fprintf(stderr, "max dynamic shared memory per block (opt-in): %d B\n", max_optin);
    printf("mode,dynamic_smem_bytes,ring_bytes,cycles_per_step\n");
    // no dynamic shared memory: the driver's default, the most L1 asked for, the most shared memory
    sweep<0>("default", 0, big, d_perm, d_sink, d_cyc);
    CK(cudaFuncSetAttribute(k_chase_smem<1>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    sweep<1>("prefer_l1", 0, big, d_perm, d_sink, d_cyc);
    CK(cudaFuncSetAttribute(k_chase_smem<2>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    sweep<2>("prefer_shared", 0, big, d_perm, d_sink, d_cyc);
    // dynamic shared memory from 8 KB to the opt-in maximum, no preference (as the suites launch)
    CK(cudaFuncSetAttribute(k_chase_smem<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_optin));
    const size_t sizes_kb[] = {8, 24, 40, 56, 72, 100, 120, 140, 160, 180, 200, 220};
    for (size_t kb : sizes_kb) sweep<3>("dynamic", kb << 10, big, d_perm, d_sink, d_cyc);
    sweep<3>("dynamic", (size_t)max_optin, big, d_perm, d_sink, d_cyc);
    CK(cudaFree(big));
    CK(cudaFree(d_perm));
    return 0;
}
