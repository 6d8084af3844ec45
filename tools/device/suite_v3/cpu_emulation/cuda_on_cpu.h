// Runs CUDA C++ kernels on the CPU for logic checks (tools/device/suite_v3/cpu_emulation/build.py):
// one std::thread per CUDA thread, the blocks of a grid one after another, __syncthreads as a
// std::barrier (exited threads drop out), warp intrinsics through a per-warp exchange and barrier,
// atomics under one mutex, tex1Dfetch from the linear memory a texture object stands for.
#pragma once
#include <algorithm>
#include <barrier>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __constant__
#define __launch_bounds__(x)

struct uint3e { unsigned x = 0, y = 0, z = 0; };
struct dim3e { unsigned x = 1, y = 1, z = 1; };
inline thread_local uint3e threadIdx, blockIdx;
inline dim3e blockDim, gridDim;
struct float4 { float x, y, z, w; };
struct uchar4 { unsigned char x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uchar4 make_uchar4(unsigned char a, unsigned char b, unsigned char c, unsigned char d) { return {a, b, c, d}; }
using std::min; using std::max;
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
template <class T> inline T __ldg(const T *p) { return *p; }
typedef unsigned long long cudaTextureObject_t;
template <class T> inline T tex1Dfetch(cudaTextureObject_t t, int i) { return reinterpret_cast<const T *>(t)[i]; }

struct BlockSync {
    std::unique_ptr<std::barrier<>> block;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<uint64_t> exchange;   // one slot per thread
};
inline BlockSync *g_sync = nullptr;
inline std::mutex g_atomic;
inline unsigned char *g_dyn_smem = nullptr;

inline unsigned flat_tid() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
inline void __syncthreads() { g_sync->block->arrive_and_wait(); }

template <class T> inline T warp_exchange(T v, int src_lane)
{
    const unsigned t = flat_tid(), w = t / 32;
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    g_sync->exchange[t] = bits;
    g_sync->warps[w]->arrive_and_wait();
    T out = v;
    if (src_lane >= 0 && src_lane < 32) std::memcpy(&out, &g_sync->exchange[w * 32 + src_lane], sizeof(T));
    g_sync->warps[w]->arrive_and_wait();
    return out;
}
template <class T> inline T __shfl_xor_sync(unsigned, T v, int m) { return warp_exchange(v, (int)((flat_tid() & 31) ^ m)); }
template <class T> inline T __shfl_down_sync(unsigned, T v, int d)
{ int l = flat_tid() & 31; return warp_exchange(v, l + d < 32 ? l + d : l); }
template <class T> inline T __shfl_up_sync(unsigned, T v, int d)
{ int l = flat_tid() & 31; return warp_exchange(v, l - d >= 0 ? l - d : l); }
inline unsigned __ballot_sync(unsigned, bool p)
{
    unsigned r = 0;
    for (int l = 0; l < 32; ++l) r |= (warp_exchange((unsigned)p, l) ? 1u : 0u) << l;
    return r;
}
template <class T> inline T atomicAdd(T *p, T v) { std::lock_guard<std::mutex> g(g_atomic); T o = *p; *p = o + v; return o; }
template <class T> inline T atomicMax(T *p, T v) { std::lock_guard<std::mutex> g(g_atomic); T o = *p; *p = std::max(o, v); return o; }

// Run kernel(args...) over grid x block with `smem` bytes of dynamic shared memory.
template <class... A>
void emu_launch(void (*kernel)(A...), dim3e grid, dim3e block, size_t smem, A... args)
{
    gridDim = grid;
    blockDim = block;
    const unsigned n = block.x * block.y * block.z;
    std::vector<unsigned char> dyn(smem + 64, 0);
    g_dyn_smem = dyn.data();
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                BlockSync sync;
                sync.block = std::make_unique<std::barrier<>>(n);
                for (unsigned w = 0; w < (n + 31) / 32; ++w)
                    sync.warps.push_back(std::make_unique<std::barrier<>>(std::min(32u, n - 32 * w)));
                sync.exchange.assign(n + 32, 0);
                g_sync = &sync;
                std::vector<std::thread> threads;
                for (unsigned t = 0; t < n; ++t)
                    threads.emplace_back([&, t, bx, by, bz] {
                        blockIdx = {bx, by, bz};
                        threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                        kernel(args...);
                        g_sync->block->arrive_and_drop();
                        g_sync->warps[t / 32]->arrive_and_drop();
                    });
                for (auto &th : threads) th.join();
            }
}
