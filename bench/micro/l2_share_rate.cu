// Warpline microbenchmark: the rate at which SMs read L2-resident data when each line is read by
// one SM (a stream split among the blocks) against when every SM reads every line (a GEMM's
// panels), through LDG.128 with every byte used and through cp.async.cg 16-byte copies into a
// shared-memory ring of 4 or 8 stages. All loads bypass L1 (.cg), and the blocks of one SM read
// different lines at any moment (no in-flight merge in L1).
//   own_*    : block b reads its own 2 KB tiles of a 16 MB buffer (the buffer split among the
//              blocks), 64 passes: each line read by one SM, again and again
//   shared_* : every block reads all of a 4 MB buffer once, starting at its own tile (b * 97) and
//              wrapping: every SM reads every line, at different times
// Stdout lists the launches in the order ncu sees them, with the bytes each one requests.
//
// Build: nvcc -O3 -arch=sm_90 -o l2_share_rate l2_share_rate.cu

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

static const int TILE = 128;   // float4 per tile: one per thread of a 128-thread block (2 KB)

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}

// The tiles a block reads in turn: own (its own `tiles` consecutive tiles, over and over: no other
// SM reads them) or shared (every one of the buffer's `tiles` once, from its own start). Kept as a
// running index, so no division sits in the loop.
struct Tiles {
    unsigned first, count, at;
    __device__ Tiles(int shared, unsigned tiles)
        : first(shared ? 0u : blockIdx.x * tiles), count(tiles), at(shared ? (blockIdx.x * 97u) % tiles : 0u) {}
    __device__ __forceinline__ size_t next() {
        const unsigned t = first + at;
        at = at + 1 == count ? 0u : at + 1;
        return t;
    }
};

__global__ void k_ldg(const float4* __restrict__ in, size_t tiles, size_t steps, int shared, float* sink) {
    float acc = 0.f;
    // 4 independent 16-byte loads in flight per thread
    Tiles order(shared, (unsigned)tiles);
    for (size_t u = 0; u + 3 < steps; u += 4) {
        const float4 v0 = __ldcg(in + order.next() * TILE + threadIdx.x);
        const float4 v1 = __ldcg(in + order.next() * TILE + threadIdx.x);
        const float4 v2 = __ldcg(in + order.next() * TILE + threadIdx.x);
        const float4 v3 = __ldcg(in + order.next() * TILE + threadIdx.x);
        acc += (v0.x + v0.y + v0.z + v0.w) + (v1.x + v1.y + v1.z + v1.w) + (v2.x + v2.y + v2.z + v2.w) +
               (v3.x + v3.y + v3.z + v3.w);
    }
    if (acc == 1.2345f) sink[0] = acc;
}

template <int STAGES>
__global__ void k_cpasync(const float4* __restrict__ in, size_t tiles, size_t steps, int shared, float* sink) {
    __shared__ float4 ring[STAGES][TILE];
    float acc = 0.f;
    Tiles order(shared, (unsigned)tiles);
    size_t next = 0;
    for (int s = 0; s < STAGES - 1; ++s, ++next) {
        if (next < steps) cp_async16(&ring[next % STAGES][threadIdx.x], in + order.next() * TILE + threadIdx.x);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (size_t u = 0; u < steps; ++u, ++next) {
        if (next < steps) cp_async16(&ring[next % STAGES][threadIdx.x], in + order.next() * TILE + threadIdx.x);
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 1) : "memory");
        __syncthreads();
        const float4 v = ring[u % STAGES][(threadIdx.x * 7) & (TILE - 1)];
        acc += v.x + v.y + v.z + v.w;
        __syncthreads();
    }
    if (acc == 1.2345f) sink[0] = acc;
}

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const size_t own_bytes = (size_t)16 << 20, shared_bytes = (size_t)4 << 20;
    float4* buf;
    float* sink;
    CK(cudaMalloc(&buf, own_bytes));
    CK(cudaMemset(buf, 0, own_bytes));
    CK(cudaMalloc(&sink, 64));
    const int blocks_per_sm = 8, grid = sms * blocks_per_sm;
    // own: each block its share of the tiles, 64 passes; shared: every block all tiles once
    const size_t own_tiles = own_bytes / (TILE * 16) / grid, shared_tiles = shared_bytes / (TILE * 16);
    const size_t own_steps = 64 * own_tiles, shared_steps = shared_tiles;
    printf("launch,kernel,grid,block,bytes\n");
    int order = 0;
    for (int rep = 0; rep < 2; ++rep) {
        k_ldg<<<grid, TILE>>>(buf, own_tiles, own_steps, 0, sink);
        printf("%d,own_ldg128,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * own_steps / 4 * 4 * TILE * 16);
        k_ldg<<<grid, TILE>>>(buf, shared_tiles, shared_steps, 1, sink);
        printf("%d,shared_ldg128,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * shared_steps / 4 * 4 * TILE * 16);
        k_cpasync<4><<<grid, TILE>>>(buf, own_tiles, own_steps, 0, sink);
        printf("%d,own_cpasync4,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * own_steps * TILE * 16);
        k_cpasync<4><<<grid, TILE>>>(buf, shared_tiles, shared_steps, 1, sink);
        printf("%d,shared_cpasync4,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * shared_steps * TILE * 16);
        k_cpasync<8><<<grid, TILE>>>(buf, own_tiles, own_steps, 0, sink);
        printf("%d,own_cpasync8,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * own_steps * TILE * 16);
        k_cpasync<8><<<grid, TILE>>>(buf, shared_tiles, shared_steps, 1, sink);
        printf("%d,shared_cpasync8,%d,%d,%zu\n", order++, grid, TILE, (size_t)grid * shared_steps * TILE * 16);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    return 0;
}
