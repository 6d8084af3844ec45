// Warpline microbenchmarks: latency Λ and CPI λ of PTX instructions, memory latencies and
// bandwidths, bar.sync cost, block launch overhead and the issue limit IL (001's instruction
// mix, eqs. 43-45). One program; it prints CSV rows `bench,name,param,value,unit` on stdout.
//
// Method (docs/microbenchmarks.md has the details):
//  * every timing is clock64() inside the kernel (SM cycles), except the launch benchmark,
//    which times with CUDA events and converts to cycles with the SM clock measured here;
//  * loop overhead is removed by differencing two runs of different length: the figure is
//    (cycles(N2) - cycles(N1)) / (instructions(N2) - instructions(N1));
//  * the instruction under test is inline PTX (asm volatile), so NVVM cannot fold or reorder
//    it; cuobjdump -sass shows what ptxas made of it (bench/micro/results/*/sass_summary.txt).
//
// Build: nvcc -O3 -arch=sm_90 -o micro micro.cu

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(call)                                                                           \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, \
                    __LINE__, cudaGetErrorString(e_));                                     \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)
#define CKL()                        \
    CK(cudaGetLastError());          \
    CK(cudaDeviceSynchronize())

static void row(const char* bench, const std::string& name, const std::string& param, double value,
                const char* unit) {
    printf("%s,%s,%s,%.6g,%s\n", bench, name.c_str(), param.c_str(), value, unit);
    fflush(stdout);
}

struct BlockRec {
    unsigned smid;
    unsigned pad;
    long long start, end;
};

__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

// ------------------------------------------------------------------------------------------
// Instructions under test. step(x, y) makes x depend on itself (a chain); y is a run-time value.

#define OP_BIN(NAME, TY, C, PTX, INIT, YV)                                                    \
    struct NAME {                                                                          \
        typedef TY T;                                                                      \
        static constexpr const char* name = #NAME;                                         \
        static constexpr const char* ptx = PTX;                                            \
        static __host__ __device__ TY init(int i) { return (TY)(INIT) + (TY)(i & 7); }      \
        static __host__ __device__ TY yval() { return (TY)(YV); }                           \
        static __device__ __forceinline__ void step(TY& x, TY y) {                         \
            asm volatile(PTX " %0, %0, %1;" : "+" C(x) : C(y));                            \
        }                                                                                  \
    };
#define OP_FMA(NAME, TY, C, PTX, INIT, YV)                                                    \
    struct NAME {                                                                          \
        typedef TY T;                                                                      \
        static constexpr const char* name = #NAME;                                         \
        static constexpr const char* ptx = PTX;                                            \
        static __host__ __device__ TY init(int i) { return (TY)(INIT) + (TY)(i & 7); }      \
        static __host__ __device__ TY yval() { return (TY)(YV); }                           \
        static __device__ __forceinline__ void step(TY& x, TY y) {                         \
            asm volatile(PTX " %0, %0, %1, %1;" : "+" C(x) : C(y));                        \
        }                                                                                  \
    };
// Divisions divide the run-time value y by the chain (x = y / x): with a loop-invariant divisor
// ptxas would hoist the reciprocal and leave a multiplication.
#define OP_DIV(NAME, TY, C, PTX, INIT, YV)                                                    \
    struct NAME {                                                                          \
        typedef TY T;                                                                      \
        static constexpr const char* name = #NAME;                                         \
        static constexpr const char* ptx = PTX;                                            \
        static __host__ __device__ TY init(int i) { return (TY)(INIT) + (TY)(i & 7); }      \
        static __host__ __device__ TY yval() { return (TY)(YV); }                           \
        static __device__ __forceinline__ void step(TY& x, TY y) {                         \
            asm volatile(PTX " %0, %1, %0;" : "+" C(x) : C(y));                            \
        }                                                                                  \
    };
#define OP_UN(NAME, TY, C, PTX, INIT)                                                         \
    struct NAME {                                                                          \
        typedef TY T;                                                                      \
        static constexpr const char* name = #NAME;                                         \
        static constexpr const char* ptx = PTX;                                            \
        static __host__ __device__ TY init(int i) { return (TY)(INIT) + (TY)(i & 7); }      \
        static __host__ __device__ TY yval() { return (TY)0; }                              \
        static __device__ __forceinline__ void step(TY& x, TY) {                           \
            asm volatile(PTX " %0, %0;" : "+" C(x));                                       \
        }                                                                                  \
    };

OP_BIN(add_f32, float, "f", "add.rn.f32", 1.5f, 1.0e-7f)
OP_BIN(mul_f32, float, "f", "mul.rn.f32", 1.5f, 1.0000001f)
OP_FMA(fma_f32, float, "f", "fma.rn.f32", 1.5f, 0.999999f)
OP_BIN(add_f64, double, "d", "add.rn.f64", 1.5, 1.0e-9)
OP_FMA(fma_f64, double, "d", "fma.rn.f64", 1.5, 0.999999)
// add.s32: ptxas merges two consecutive dependent adds into one IADD3 (a three-input add) and
// folds repeated adds of one operand into LEA/IMAD, so each step is a pair of adds of two
// different run-time values, which becomes exactly one IADD3 (see sass_summary.txt). The
// figures are per IADD3, i.e. per step; make_profile.py documents the fusion.
struct add_s32_pair {
    typedef int T;
    static constexpr const char* name = "add_s32_pair";
    static constexpr const char* ptx = "add.s32 x2 (one IADD3)";
    static __host__ __device__ int init(int i) { return 1 + (i & 7); }
    static __host__ __device__ int yval() { return 0x9e3779b9; }
    static __device__ __forceinline__ void step(int& x, int y) {
        asm volatile("add.s32 %0, %0, %1;\n\tadd.s32 %0, %0, %2;" : "+r"(x) : "r"(y), "r"(y ^ 0x5bd1e995));
    }
};
OP_BIN(mul_s32, int, "r", "mul.lo.s32", 1, 0x9e3779b9)
OP_FMA(mad_s32, int, "r", "mad.lo.s32", 1, 0x9e3779b9)
OP_UN(sin_approx, float, "f", "sin.approx.f32", 0.5f)
OP_UN(cos_approx, float, "f", "cos.approx.f32", 0.5f)
OP_UN(ex2_approx, float, "f", "ex2.approx.f32", -100.0f)
OP_UN(ex2_approx_ftz, float, "f", "ex2.approx.ftz.f32", -100.0f)
OP_UN(rcp_approx, float, "f", "rcp.approx.f32", 1.5f)
OP_UN(sqrt_approx, float, "f", "sqrt.approx.f32", 1.5f)
OP_UN(rsqrt_approx, float, "f", "rsqrt.approx.f32", 1.5f)
// rcp.approx.ftz twice in a row is folded away by ptxas (an involution), so its chain is
// rcp + add.rn.f32 (y = 0 at run time); make_profile.py subtracts add.rn.f32's latency.
struct rcp_approx_ftz_add {
    typedef float T;
    static constexpr const char* name = "rcp_approx_ftz+add_f32";
    static constexpr const char* ptx = "rcp.approx.ftz.f32 + add.rn.f32";
    static __host__ __device__ float init(int i) { return 1.5f + (float)(i & 7); }
    static __host__ __device__ float yval() { return 0.f; }
    static __device__ __forceinline__ void step(float& x, float y) {
        asm volatile("rcp.approx.ftz.f32 %0, %0;\n\tadd.rn.f32 %0, %0, %1;" : "+f"(x) : "f"(y));
    }
};
OP_UN(sqrt_approx_ftz, float, "f", "sqrt.approx.ftz.f32", 1.5f)
OP_UN(rsqrt_approx_ftz, float, "f", "rsqrt.approx.ftz.f32", 1.5f)
// Packed half precision: two 16-bit lanes in one 32-bit register (HFMA2/HADD2/HMUL2 in SASS).
// The values stay near 1 (no overflow, no denormals) whatever the chain length.
OP_FMA(fma_f16x2, unsigned, "r", "fma.rn.f16x2", 0x3C003C00u, 0x3BFF3BFFu)
OP_BIN(add_f16x2, unsigned, "r", "add.rn.f16x2", 0x3C003C00u, 0x00010001u)
OP_BIN(mul_f16x2, unsigned, "r", "mul.rn.f16x2", 0x3C003C00u, 0x3C003C00u)
OP_FMA(fma_bf16x2, unsigned, "r", "fma.rn.bf16x2", 0x3F803F80u, 0x3F7F3F7Fu)
// Tensor cores: the accumulator is the chain (d = a*b + d). a and b are run-time zeros (the
// tensor pipe's timing does not depend on the values), so the accumulators keep their value.
template <int N>
struct Acc {
    float v[N];
};
template <int N>
__host__ __device__ inline Acc<N> operator+(Acc<N> a, const Acc<N>& b) {
    for (int k = 0; k < N; k++) a.v[k] += b.v[k];
    return a;
}
template <int N>
__host__ __device__ inline Acc<N> acc_fill(float x) {
    Acc<N> a;
    for (int k = 0; k < N; k++) a.v[k] = x;
    return a;
}
#define U(x) __float_as_uint(x)
// wmma m16n16k16, f16 inputs, f32 accumulators (two HMMA.16816.F32 in SASS); a and b: 8 registers each
struct wmma_f32 {
    typedef Acc<8> T;
    static constexpr const char* name = "wmma_f32";
    static constexpr const char* ptx = "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32";
    static __host__ __device__ T init(int i) { return acc_fill<8>((float)(i & 7)); }
    static __host__ __device__ T yval() { return acc_fill<8>(0.f); }
    static __device__ __forceinline__ void step(T& x, T y) {
        asm volatile(
            "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, "
            "{%8,%9,%10,%11,%12,%13,%14,%15}, {%8,%9,%10,%11,%12,%13,%14,%15}, {%0,%1,%2,%3,%4,%5,%6,%7};"
            : "+f"(x.v[0]), "+f"(x.v[1]), "+f"(x.v[2]), "+f"(x.v[3]), "+f"(x.v[4]), "+f"(x.v[5]),
              "+f"(x.v[6]), "+f"(x.v[7])
            : "r"(U(y.v[0])), "r"(U(y.v[1])), "r"(U(y.v[2])), "r"(U(y.v[3])), "r"(U(y.v[4])),
              "r"(U(y.v[5])), "r"(U(y.v[6])), "r"(U(y.v[7])));
    }
};
// mma m16n8k16, f16 inputs, f32 accumulators (one HMMA.16816.F32); a: 4 registers, b: 2
struct mma_m16n8k16_f32 {
    typedef Acc<4> T;
    static constexpr const char* name = "mma_m16n8k16_f32";
    static constexpr const char* ptx = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    static __host__ __device__ T init(int i) { return acc_fill<4>((float)(i & 7)); }
    static __host__ __device__ T yval() { return acc_fill<4>(0.f); }
    static __device__ __forceinline__ void step(T& x, T y) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%4,%5}, "
            "{%0,%1,%2,%3};"
            : "+f"(x.v[0]), "+f"(x.v[1]), "+f"(x.v[2]), "+f"(x.v[3])
            : "r"(U(y.v[0])), "r"(U(y.v[1])), "r"(U(y.v[2])), "r"(U(y.v[3])));
    }
};
#undef U

OP_DIV(div_rn_f32, float, "f", "div.rn.f32", 1.5f, 2.5f)
OP_DIV(div_full_f32, float, "f", "div.full.f32", 1.5f, 2.5f)
OP_DIV(div_rn_f64, double, "d", "div.rn.f64", 1.5, 2.5)

// Conversions: the result is reinterpreted (mov.b32/mov.b64, free in SASS) as the source
// type of the next conversion, so a chain holds one conversion per step.
struct cvt_f32_s32 {  // s32 -> f32
    typedef float T;
    static constexpr const char* name = "cvt_f32_s32";
    static constexpr const char* ptx = "cvt.rn.f32.s32";
    static __host__ __device__ float init(int i) { return 1.5f + (float)(i & 7); }
    static __host__ __device__ float yval() { return 0.f; }
    static __device__ __forceinline__ void step(float& x, float) {
        asm volatile("{ .reg .s32 t; mov.b32 t, %0; cvt.rn.f32.s32 %0, t; }" : "+f"(x));
    }
};
struct cvt_s32_f32 {  // f32 -> s32
    typedef int T;
    static constexpr const char* name = "cvt_s32_f32";
    static constexpr const char* ptx = "cvt.rzi.s32.f32";
    static __host__ __device__ int init(int i) { return 0x4b000000 + (i & 7); }
    static __host__ __device__ int yval() { return 0; }
    static __device__ __forceinline__ void step(int& x, int) {
        asm volatile("{ .reg .f32 t; mov.b32 t, %0; cvt.rzi.s32.f32 %0, t; }" : "+r"(x));
    }
};
struct cvt_f64_f32 {  // f32 -> f64
    typedef double T;
    static constexpr const char* name = "cvt_f64_f32";
    static constexpr const char* ptx = "cvt.f64.f32";
    static __host__ __device__ double init(int i) { return 1.5 + (double)(i & 7); }
    static __host__ __device__ double yval() { return 0.0; }
    static __device__ __forceinline__ void step(double& x, double) {
        asm volatile("{ .reg .f32 lo, hi; mov.b64 {lo, hi}, %0; cvt.f64.f32 %0, hi; }" : "+d"(x));
    }
};

// ------------------------------------------------------------------------------------------
// Latency: one warp, one dependent chain of UNROLL*iters instructions.

constexpr int LAT_UNROLL = 32;

template <class Op>
__global__ void k_lat(int iters, typename Op::T y, typename Op::T* sink, long long* cycles) {
    typedef typename Op::T T;
    T x = Op::init(threadIdx.x);
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < LAT_UNROLL; u++) Op::step(x, y);
    }
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

// Throughput: 2 blocks x 1024 threads per SM (64 warps), ILP independent chains per thread.
constexpr int THR_UNROLL = 4;
constexpr int THR_ILP = 8;
constexpr int THR_THREADS = 1024;
// Independent chains per thread: 8, but 2 for the tensor ops, whose accumulators would not fit
// 8 times in the 32 registers a thread has at 2048 threads per SM (64 warps of 2 chains still
// keep the SM's four tensor cores busy).
template <class Op>
struct Ilp {
    static constexpr int v = THR_ILP;
};
template <>
struct Ilp<wmma_f32> {
    static constexpr int v = 2;
};
template <>
struct Ilp<mma_m16n8k16_f32> {
    static constexpr int v = 2;
};

template <class Op>
__global__ void __launch_bounds__(THR_THREADS, 2)
    k_thr(int iters, typename Op::T y, typename Op::T* sink, BlockRec* rec) {
    typedef typename Op::T T;
    constexpr int ILP = Ilp<Op>::v;
    T x[ILP];
#pragma unroll
    for (int j = 0; j < ILP; j++) x[j] = Op::init(threadIdx.x + j);
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < THR_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < ILP; j++) Op::step(x[j], y);
        }
    }
    __syncthreads();
    long long t1 = clock64();
    T acc = x[0];
#pragma unroll
    for (int j = 1; j < ILP; j++) acc = acc + x[j];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

struct Ctx {
    int sms;
    int dev;
    BlockRec* d_rec;
    std::vector<BlockRec> h_rec;
    void* d_sink;
    long long* d_cyc;
};

// Median over SMs of (last end - first start) of the blocks that ran on each SM, and the
// number of blocks each of those SMs ran (all equal when the grid fills the GPU exactly once).
static inline double sm_span(Ctx& c, int blocks, double* blocks_per_sm) {
    CK(cudaMemcpy(c.h_rec.data(), c.d_rec, sizeof(BlockRec) * blocks, cudaMemcpyDeviceToHost));
    std::vector<long long> lo(1024, LLONG_MAX), hi(1024, LLONG_MIN);
    std::vector<int> cnt(1024, 0);
    for (int b = 0; b < blocks; b++) {
        const BlockRec& r = c.h_rec[b];
        lo[r.smid] = std::min(lo[r.smid], r.start);
        hi[r.smid] = std::max(hi[r.smid], r.end);
        cnt[r.smid]++;
    }
    std::vector<double> spans, counts;
    for (int s = 0; s < 1024; s++)
        if (cnt[s]) {
            spans.push_back((double)(hi[s] - lo[s]));
            counts.push_back(cnt[s]);
        }
    std::sort(spans.begin(), spans.end());
    std::sort(counts.begin(), counts.end());
    if (blocks_per_sm) *blocks_per_sm = counts[counts.size() / 2];
    if (counts.front() != counts.back())
        fprintf(stderr, "note: blocks per SM vary (%g..%g)\n", counts.front(), counts.back());
    return spans[spans.size() / 2];
}

template <class Op>
static void bench_op(Ctx& c) {
    typedef typename Op::T T;
    // Latency.
    const int L1 = 16, L2 = 48;
    long long cyc[2];
    int its[2] = {L1, L2};
    for (int k = 0; k < 2; k++) {
        k_lat<Op><<<1, 32>>>(its[k], Op::yval(), (T*)c.d_sink, c.d_cyc);
        CKL();
        k_lat<Op><<<1, 32>>>(its[k], Op::yval(), (T*)c.d_sink, c.d_cyc);  // second: warm i-cache
        CKL();
        CK(cudaMemcpy(&cyc[k], c.d_cyc, sizeof(long long), cudaMemcpyDeviceToHost));
    }
    double lat = (double)(cyc[1] - cyc[0]) / ((L2 - L1) * LAT_UNROLL);
    row("lat", Op::name, Op::ptx, lat, "cycles");
    // Throughput.
    const int T1 = 8, T2 = 24;
    int blocks = 2 * c.sms;
    double span[2], bps = 0;
    int tits[2] = {T1, T2};
    for (int k = 0; k < 2; k++) {
        k_thr<Op><<<blocks, THR_THREADS>>>(tits[k], Op::yval(), (T*)c.d_sink, c.d_rec);
        CKL();
        k_thr<Op><<<blocks, THR_THREADS>>>(tits[k], Op::yval(), (T*)c.d_sink, c.d_rec);
        CKL();
        span[k] = sm_span(c, blocks, &bps);
    }
    double warp_instr = bps * (THR_THREADS / 32) * (double)(T2 - T1) * THR_UNROLL * Ilp<Op>::v;
    row("cpi", Op::name, Op::ptx, (span[1] - span[0]) / warp_instr, "cycles/warp-instr/SM");
}

// ------------------------------------------------------------------------------------------
// SM clock: cycles per nanosecond of %globaltimer over a ~2 ms spin.

__global__ void k_clock(long long spin, long long* out) {
    long long g0, g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    long long c0 = clock64();
    while (clock64() - c0 < spin) {
    }
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    out[0] = c1 - c0;
    out[1] = g1 - g0;
}

// Busy kernel on every SM, so the clock is at its boost value before a measurement.
__global__ void k_busy(long long spin) {
    long long c0 = clock64();
    while (clock64() - c0 < spin) {
    }
}

static double measure_clock_mhz(Ctx& c) {
    k_busy<<<c.sms * 4, 256>>>(20000000);  // ~10 ms at boost
    CKL();
    k_clock<<<1, 1>>>(4000000, c.d_cyc);
    CKL();
    long long h[2];
    CK(cudaMemcpy(h, c.d_cyc, sizeof(h), cudaMemcpyDeviceToHost));
    return (double)h[0] / (double)h[1] * 1000.0;
}

// ------------------------------------------------------------------------------------------
// Shared memory.

constexpr int SH_WORDS = 4096;

__global__ void k_shared_lat(int iters, unsigned* sink, long long* cycles) {
    __shared__ unsigned ring[SH_WORDS];
    unsigned base = (unsigned)__cvta_generic_to_shared(ring);
    if (threadIdx.x == 0) {
        // A cyclic permutation of 256 slots spaced 64 bytes apart (16 words), slot order
        // scrambled by a multiplicative step coprime to 256.
        for (int i = 0; i < 256; i++) {
            int cur = (i * 97) & 255, nxt = ((i + 1) * 97) & 255;
            ring[cur * 16] = base + nxt * 16 * 4;
        }
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned p = base;
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < LAT_UNROLL; u++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p));
    }
    long long t1 = clock64();
    sink[0] = p;
    cycles[0] = t1 - t0;
}

// Throughput: each warp reads/writes 32 consecutive words (no bank conflict).
template <bool STORE>
__global__ void __launch_bounds__(THR_THREADS, 2) k_shared_thr(int iters, unsigned* sink, BlockRec* rec) {
    __shared__ unsigned buf[THR_ILP * 32 * 32];  // 32 KB
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned base = (unsigned)__cvta_generic_to_shared(buf) + (unsigned)lane * 4u;
    for (int i = threadIdx.x; i < THR_ILP * 32 * 32; i += blockDim.x) buf[i] = i;
    __syncthreads();
    unsigned v[THR_ILP];
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) v[j] = threadIdx.x + j;
    unsigned addr[THR_ILP];
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) addr[j] = base + (unsigned)(((warp + j * 4) & 31) * 32 * 4 * THR_ILP / 8);
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < THR_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < THR_ILP; j++) {
                if (STORE)
                    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(addr[j]), "r"(v[j]) : "memory");
                else
                    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v[j]) : "r"(addr[j]) : "memory");
            }
        }
    }
    __syncthreads();
    long long t1 = clock64();
    unsigned acc = 0;
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) acc ^= v[j];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc + buf[threadIdx.x];
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

static void bench_shared(Ctx& c) {
    long long cyc[2];
    int its[2] = {16, 48};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_shared_lat<<<1, 32>>>(its[k], (unsigned*)c.d_sink, c.d_cyc);
            CKL();
        }
        CK(cudaMemcpy(&cyc[k], c.d_cyc, sizeof(long long), cudaMemcpyDeviceToHost));
    }
    row("lat", "ld_shared", "ld.shared.u32 (pointer chase)", (double)(cyc[1] - cyc[0]) / (32.0 * LAT_UNROLL), "cycles");
    int blocks = 2 * c.sms;
    for (int st = 0; st < 2; st++) {
        double span[2], bps = 0;
        int tits[2] = {8, 24};
        for (int k = 0; k < 2; k++) {
            for (int rep = 0; rep < 2; rep++) {
                if (st) k_shared_thr<true><<<blocks, THR_THREADS>>>(tits[k], (unsigned*)c.d_sink, c.d_rec);
                else k_shared_thr<false><<<blocks, THR_THREADS>>>(tits[k], (unsigned*)c.d_sink, c.d_rec);
                CKL();
            }
            span[k] = sm_span(c, blocks, &bps);
        }
        double wi = bps * 32 * 16.0 * THR_UNROLL * THR_ILP;
        double lam = (span[1] - span[0]) / wi;
        row("cpi", st ? "st_shared" : "ld_shared", st ? "st.shared.u32" : "ld.shared.u32", lam, "cycles/warp-instr/SM");
        row("bw", st ? "st_shared" : "ld_shared", "bytes/cycle/SM", 128.0 / lam, "B/cycle/SM");
    }
}

// ------------------------------------------------------------------------------------------
// Local memory (CUDA .local: per-thread stack, cached in L1).

// Latency: one thread chases a 32-node ring (64 B apart) in its own 2 KB local array, each node
// holding the local-window address of the next (ld.local.u64 p, [p]: pure LDL).
__global__ void k_local_lat(int iters, unsigned long long* sink, long long* cycles) {
    unsigned long long buf[256];
    unsigned long long base;
    asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(base) : "l"(buf));
    for (int i = 0; i < 32; i++) {
        unsigned long long cur = base + ((i * 13) & 31) * 64, nxt = base + (((i + 1) * 13) & 31) * 64;
        asm volatile("st.local.u64 [%0], %1;" ::"l"(cur), "l"(nxt) : "memory");
    }
    unsigned long long p = base;
    // one warm lap
    for (int i = 0; i < 32; i++) asm volatile("ld.local.u64 %0, [%0];" : "+l"(p)::"memory");
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < LAT_UNROLL; u++) asm volatile("ld.local.u64 %0, [%0];" : "+l"(p)::"memory");
    }
    long long t1 = clock64();
    sink[threadIdx.x] = p + buf[threadIdx.x & 255];
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

// Throughput: 64 warps per SM; each thread runs THR_ILP independent pointer chases, each in
// an 8-entry ring of 4-byte local-window addresses inside its own local array. The hardware
// interleaves local memory by thread, so the warp's 32 loads of one step form one 128 B line.
__global__ void __launch_bounds__(THR_THREADS, 2) k_local_thr(int iters, unsigned* sink, BlockRec* rec) {
    unsigned buf[THR_ILP * 8];
    unsigned long long base64;
    asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(base64) : "l"(buf));
    unsigned base = (unsigned)base64;
    for (int j = 0; j < THR_ILP; j++)
        for (int m = 0; m < 8; m++)
            asm volatile("st.local.u32 [%0], %1;" ::"r"(base + 4 * (j * 8 + m)), "r"(base + 4 * (j * 8 + ((m + 3) & 7)))
                         : "memory");
    unsigned p[THR_ILP];
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) p[j] = base + 4 * j * 8;
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < THR_UNROLL; u++) {
#pragma unroll
            for (int j = 0; j < THR_ILP; j++) asm volatile("ld.local.u32 %0, [%0];" : "+r"(p[j])::"memory");
        }
    }
    __syncthreads();
    long long t1 = clock64();
    unsigned acc = 0;
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) acc ^= p[j];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc + buf[threadIdx.x & 63];
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

// Local memory whose data stays in L1: 64 warps per SM, each thread's 8-word (32 B) array, so
// 64 KB per SM. MODE 0: 8 pointer chases, one starting at each word of the thread's 8-entry ring
// (loads, one 128 B line per warp request); MODE 1: stores of a running value to word
// (i + j) mod 8, every lane active; MODE 2: the same stores from the odd lanes only, so every
// 32 B sector a request touches is half written (the divergent stores of a data-dependent
// branch). The offsets are the same in every lane: one line per request.
template <int MODE>
__global__ void __launch_bounds__(THR_THREADS, 2) k_local_l1(int iters, unsigned* sink, BlockRec* rec) {
    unsigned buf[8];
    unsigned long long base64;
    asm volatile("cvta.to.local.u64 %0, %1;" : "=l"(base64) : "l"(buf));
    unsigned base = (unsigned)base64;
    for (int m = 0; m < 8; m++)
        asm volatile("st.local.u32 [%0], %1;" ::"r"(base + 4 * m), "r"(base + 4 * ((m + 3) & 7)) : "memory");
    unsigned p[THR_ILP];
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) p[j] = base + 4 * (j & 7);
    const bool active = MODE != 2 || (threadIdx.x & 1);
    __syncthreads();
    long long t0 = clock64();
    if (active) {
        for (int i = 0; i < iters; i++) {
#pragma unroll
            for (int u = 0; u < THR_UNROLL; u++) {
#pragma unroll
                for (int j = 0; j < THR_ILP; j++) {
                    if (MODE == 0)
                        asm volatile("ld.local.u32 %0, [%0];" : "+r"(p[j])::"memory");
                    else
                        asm volatile("st.local.u32 [%0], %1;" ::"r"(base + 4 * ((u + j) & 7)), "r"(p[j] + i) : "memory");
                }
            }
        }
    }
    __syncthreads();
    long long t1 = clock64();
    unsigned acc = 0;
#pragma unroll
    for (int j = 0; j < THR_ILP; j++) acc ^= p[j];
    unsigned last;
    asm volatile("ld.local.u32 %0, [%1];" : "=r"(last) : "r"(base + 4 * (threadIdx.x & 7)) : "memory");
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc + last;
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

template <int MODE>
static void bench_local_l1(Ctx& c, const char* name, const char* what) {
    int blocks = 2 * c.sms;
    double span[2], bps = 0;
    int tits[2] = {8, 24};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_local_l1<MODE><<<blocks, THR_THREADS>>>(tits[k], (unsigned*)c.d_sink, c.d_rec);
            CKL();
        }
        span[k] = sm_span(c, blocks, &bps);
    }
    double wi = bps * 32 * 16.0 * THR_UNROLL * THR_ILP;
    row("cpi", name, what, (span[1] - span[0]) / wi, "cycles/warp-instr/SM");
}

static void bench_local(Ctx& c) {
    long long cyc[2];
    int its[2] = {16, 48};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_local_lat<<<1, 32>>>(its[k], (unsigned long long*)c.d_sink, c.d_cyc);
            CKL();
        }
        CK(cudaMemcpy(&cyc[k], c.d_cyc, sizeof(long long), cudaMemcpyDeviceToHost));
    }
    row("lat", "ld_local", "ld.local.u64 (pointer chase in L1)", (double)(cyc[1] - cyc[0]) / (32.0 * LAT_UNROLL), "cycles");
    int blocks = 2 * c.sms;
    double span[2], bps = 0;
    int tits[2] = {8, 24};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_local_thr<<<blocks, THR_THREADS>>>(tits[k], (unsigned*)c.d_sink, c.d_rec);
            CKL();
        }
        span[k] = sm_span(c, blocks, &bps);
    }
    double wi = bps * 32 * 16.0 * THR_UNROLL * THR_ILP;
    row("cpi", "ld_local", "ld.local.u32", (span[1] - span[0]) / wi, "cycles/warp-instr/SM");
    bench_local_l1<0>(c, "ld_local_l1", "ld.local.u32; 32 B per thread (in L1)");
    bench_local_l1<1>(c, "st_local_l1", "st.local.u32; 32 B per thread; every lane");
    bench_local_l1<2>(c, "st_local_half", "st.local.u32; 32 B per thread; odd lanes only");
}

// ------------------------------------------------------------------------------------------
// Global-memory latency: one thread chases a random cyclic permutation of nodes 128 B apart.

__global__ void k_make_ring(unsigned long long* nodes, const unsigned* perm, size_t n, int stride_words) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t cur = perm[i], nxt = perm[(i + 1) % n];
        nodes[cur * stride_words] = (unsigned long long)(nodes + nxt * stride_words);
    }
}

// One step of a pointer chase: ld.global.ca (CACHE 0: through L1) or .cg (1: L2 only).
template <int CACHE>
__device__ __forceinline__ void chase_step(unsigned long long& p) {
    if (CACHE == 0) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
    else asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
}

// `warm` steps, then `steps` timed ones (8 per loop pass); the cycles of the timed ones.
template <int CACHE>
__device__ __forceinline__ long long chase(unsigned long long& p, int warm, int steps) {
    for (int i = 0; i < warm; i++) chase_step<CACHE>(p);
    long long t0 = clock64();
    for (int i = 0; i < steps; i += 8) {
#pragma unroll
        for (int u = 0; u < 8; u++) chase_step<CACHE>(p);
    }
    return clock64() - t0;
}

template <int CACHE>  // 0: ld.global.ca (L1), 1: ld.global.cg (L2)
__global__ void k_chase(unsigned long long start, int warm, int steps, unsigned long long* sink, long long* cycles) {
    unsigned long long p = start;
    long long t = chase<CACHE>(p, warm, steps);
    sink[0] = p;
    cycles[0] = t;
}

__global__ void k_read_flush(const float4* buf, size_t n, float* sink) {
    float acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = __ldcg(buf + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1.2345f) sink[0] = acc;
}

// The latency of one warp load whose active lanes each chase their own segment of the ring: the
// warp's next load waits for the slowest of them, so the figure is the latency of a request
// that touches that many lines (a gather, a column walk).
template <int CACHE>
__global__ void k_chase_lanes(const unsigned long long* starts, int lanes, int warm, int steps,
                              unsigned long long* sink, long long* cycles) {
    if ((int)threadIdx.x >= lanes) return;
    unsigned long long p = starts[threadIdx.x];
    long long t = chase<CACHE>(p, warm, steps);
    sink[threadIdx.x] = p;
    if (threadIdx.x == 0) cycles[0] = t;
}

// A latency case: a ring of `bytes` (nodes 128 bytes apart), chased through L1 (cache 0) or L2
// only (1), after an L2 flush (cold) or `warm_steps` steps.
struct ChaseCase {
    const char* name;
    size_t bytes;
    int cache;
    bool cold;
    int warm_steps;
    int steps;
};

const int RING_STRIDE = 128;  // bytes between the nodes of a chase ring

// Link the first n nodes of `big` into one random cycle (k_make_ring; `d_perm` holds n indices on
// the device). Returns the order, whose first node is where a chase starts.
static std::vector<unsigned> make_ring(char* big, unsigned* d_perm, size_t n, std::mt19937& rng) {
    std::vector<unsigned> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    CK(cudaMemcpy(d_perm, perm.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    k_make_ring<<<1024, 256>>>((unsigned long long*)big, d_perm, n, RING_STRIDE / 8);
    CKL();
    return perm;
}

static void bench_lanes_lat(Ctx& c, char* big, size_t big_bytes, float4* flush, size_t flush_bytes) {
    const ChaseCase cases[] = {
        {"l1", 16 << 10, 0, false, 256, 2048},
        {"l2", 8u << 20, 1, false, 0, 2048},
        {"dram_1GB", 1u << 30, 1, true, 0, 1024},
    };
    unsigned* d_perm;
    unsigned long long* d_starts;
    CK(cudaMalloc(&d_perm, big_bytes / RING_STRIDE * sizeof(unsigned)));
    CK(cudaMalloc(&d_starts, 32 * sizeof(unsigned long long)));
    std::mt19937 rng(424242);
    for (const ChaseCase& cs : cases) {
        size_t n = cs.bytes / RING_STRIDE;
        std::vector<unsigned> perm = make_ring(big, d_perm, n, rng);
        for (int lanes : {1, 2, 4, 8, 16, 32}) {
            // lane l starts l * n/32 nodes along the ring: disjoint segments
            std::vector<unsigned long long> starts(32);
            for (int l = 0; l < 32; l++)
                starts[l] = (unsigned long long)(big + (size_t)perm[(size_t)l * (n / 32)] * RING_STRIDE);
            CK(cudaMemcpy(d_starts, starts.data(), 32 * sizeof(unsigned long long), cudaMemcpyHostToDevice));
            if (cs.cold) {
                k_read_flush<<<c.sms * 4, 512>>>(flush, flush_bytes / 16, (float*)c.d_sink);
                CKL();
            } else if (cs.cache == 1) {
                // warm: 32 lanes walk the whole ring once, so every node is in L2 whatever the lane count
                k_chase_lanes<1><<<1, 32>>>(d_starts, 32, (int)(n / 32) + 64, 8, (unsigned long long*)c.d_sink,
                                            c.d_cyc);
                CKL();
            }
            if (cs.cache == 0)
                k_chase_lanes<0><<<1, 32>>>(d_starts, lanes, cs.warm_steps, cs.steps, (unsigned long long*)c.d_sink,
                                            c.d_cyc);
            else
                k_chase_lanes<1><<<1, 32>>>(d_starts, lanes, cs.warm_steps, cs.steps, (unsigned long long*)c.d_sink,
                                            c.d_cyc);
            CKL();
            long long cyc;
            CK(cudaMemcpy(&cyc, c.d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost));
            char name[64], param[128];
            snprintf(name, sizeof name, "ld_global_%s_lanes%d", cs.name, lanes);
            snprintf(param, sizeof param, "%s %zu B ring; %d lanes each on its own line %s",
                     cs.cache ? "ld.global.cg" : "ld.global.ca", cs.bytes, lanes, cs.cold ? "cold" : "warm");
            row("lat", name, param, (double)cyc / cs.steps, "cycles");
        }
    }
    CK(cudaFree(d_perm));
    CK(cudaFree(d_starts));
}

// Throughput of warp loads whose lanes touch `lines` different 128-byte lines (lane l reads word
// l / lines of line l % lines): 2 blocks x 1024 threads per SM, each warp issuing independent
// loads of its block's 4 KB (ld.global.ca: L1 hits after the first pass; .cg: L2 hits; .nc: the
// read-only path). The figure is SM cycles per warp request; over `lines` it is the cost of one
// line of a request. DIAG: lane l reads word l of line l % lines instead, so the lanes fall in 32
// different banks however many lines they touch (in the first layout `lines` lanes, each of
// another line, share every bank they use).
template <int CACHE, int DIAG = 0>
__global__ void __launch_bounds__(THR_THREADS, 2)
    k_lines_thr(const float* buf, int lines, int iters, int zero, float* sink, BlockRec* rec) {
    const int lane = threadIdx.x & 31;
    const float* base = buf + (size_t)blockIdx.x * 1024 + (lane % lines) * 32 + (DIAG ? lane : lane / lines);
    float acc = 0.f;
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) {
            float v;
            // the same words every time; `zero` (0 at run time) keeps ptxas from merging the loads
            const float* p = base + ((i * 8 + u) & zero);
            if (CACHE == 0) asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(v) : "l"(p));
            else if (CACHE == 1) asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
            else asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));
            acc += v;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

// One k_lines_thr variant at 1..32 lines: SM cycles per warp request, one row per line count.
// `launch(lines, iters)` starts the variant's grid; the rows are named `name`<lines>.
template <typename Launch>
static void lines_series(Ctx& c, int blocks, const char* name, const char* what, Launch launch) {
    for (int lines : {1, 2, 4, 8, 16, 32}) {
        const int T1 = 16, T2 = 48;
        double span[2], bps = 0;
        int its[2] = {T1, T2};
        for (int k = 0; k < 2; k++) {
            for (int rep = 0; rep < 2; rep++) {
                launch(lines, its[k]);
                CKL();
            }
            span[k] = sm_span(c, blocks, &bps);
        }
        double requests = bps * (THR_THREADS / 32) * (double)(T2 - T1) * 8;
        char row_name[64], param[112];
        snprintf(row_name, sizeof row_name, "%s%d", name, lines);
        snprintf(param, sizeof param, what, lines);
        row("cpi", row_name, param, (span[1] - span[0]) / requests, "cycles/warp-request/SM");
    }
}

// linethr (DIAG = false): ld.global.ca (L1 hits) and .cg (L2 hits), each line's lanes in the same
// banks. linediag (DIAG = true): the lanes spread over 32 banks, whether a request's cost follows
// its lines or the most lines that share one bank; ld.global.ca and ld.global.nc, L1 hits.
static void bench_lines(Ctx& c, bool diag) {
    const int blocks = 2 * c.sms;
    float* buf;
    CK(cudaMalloc(&buf, (size_t)blocks * 4096));
    CK(cudaMemset(buf, 0, (size_t)blocks * 4096));
    float* sink = (float*)c.d_sink;
    if (!diag) {
        lines_series(c, blocks, "ld_global_l1_lines", "ld.global.ca; lanes over %d lines; 64 warps/SM",
                     [&](int lines, int iters) { k_lines_thr<0><<<blocks, THR_THREADS>>>(buf, lines, iters, 0, sink, c.d_rec); });
        lines_series(c, blocks, "ld_global_l2_lines", "ld.global.cg; lanes over %d lines; 64 warps/SM",
                     [&](int lines, int iters) { k_lines_thr<1><<<blocks, THR_THREADS>>>(buf, lines, iters, 0, sink, c.d_rec); });
    } else {
        lines_series(c, blocks, "ld_global_l1_diag_lines", "ld.global.ca; lanes over %d lines in 32 banks; 64 warps/SM",
                     [&](int lines, int iters) { k_lines_thr<0, 1><<<blocks, THR_THREADS>>>(buf, lines, iters, 0, sink, c.d_rec); });
        lines_series(c, blocks, "ld_global_nc_diag_lines", "ld.global.nc; lanes over %d lines in 32 banks; 64 warps/SM",
                     [&](int lines, int iters) { k_lines_thr<2, 1><<<blocks, THR_THREADS>>>(buf, lines, iters, 0, sink, c.d_rec); });
    }
    CK(cudaFree(buf));
}

static void bench_global_lat(Ctx& c, char* big, size_t big_bytes, float4* flush, size_t flush_bytes) {
    const ChaseCase cases[] = {
        {"l1", 16 << 10, 0, false, 256, 4096},
        {"l2", 8u << 20, 1, false, 65536, 4096},
        {"dram_128MB", 128u << 20, 1, true, 0, 2048},
        {"dram_1GB", 1u << 30, 1, true, 0, 2048},
        // the same through L1 (ld.global.ca, a plain ld.global): what an L1 miss adds
        {"l2_ca", 8u << 20, 0, false, 65536, 4096},
        {"dram_1GB_ca", 1u << 30, 0, true, 0, 2048},
    };
    unsigned* d_perm;
    CK(cudaMalloc(&d_perm, big_bytes / RING_STRIDE * sizeof(unsigned)));
    std::mt19937 rng(12345);
    for (const ChaseCase& cs : cases) {
        std::vector<unsigned> perm = make_ring(big, d_perm, cs.bytes / RING_STRIDE, rng);
        unsigned long long start = (unsigned long long)(big + (size_t)perm[0] * RING_STRIDE);
        if (cs.cold) {
            k_read_flush<<<c.sms * 4, 512>>>(flush, flush_bytes / 16, (float*)c.d_sink);
            CKL();
        }
        if (cs.cache == 0) k_chase<0><<<1, 1>>>(start, cs.warm_steps, cs.steps, (unsigned long long*)c.d_sink, c.d_cyc);
        else k_chase<1><<<1, 1>>>(start, cs.warm_steps, cs.steps, (unsigned long long*)c.d_sink, c.d_cyc);
        CKL();
        long long cyc;
        CK(cudaMemcpy(&cyc, c.d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost));
        char param[96];
        snprintf(param, sizeof param, "%s %zu B ring stride 128 B %s", cs.cache ? "ld.global.cg" : "ld.global.ca",
                 cs.bytes, cs.cold ? "cold" : "warm");
        row("lat", std::string("ld_global_") + cs.name, param, (double)cyc / cs.steps, "cycles");
    }
    CK(cudaFree(d_perm));
}

// Cache geometry for the cache simulator (engine.caches): the latency of one thread chasing a
// random ring of nodes 128 B apart, warmed by two passes, as the ring grows (the knee is the
// capacity a single SM sees) and, for L1, over N lines spaced S bytes apart (lines that may fall
// in one set: the knee over N is the associativity, unless the set index is hashed).
static void chase_row(Ctx& c, char* big, unsigned* d_perm, size_t bytes, size_t stride, int cache,
                      std::mt19937& rng, const char* name) {
    size_t n = bytes / stride;
    std::vector<unsigned> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    CK(cudaMemcpy(d_perm, perm.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    k_make_ring<<<1024, 256>>>((unsigned long long*)big, d_perm, n, (int)(stride / 8));
    CKL();
    unsigned long long start = (unsigned long long)(big + (size_t)perm[0] * stride);
    int warm = (int)std::min<size_t>(2 * n + 64, 4u << 20);
    int steps = 4096;
    if (cache == 0) k_chase<0><<<1, 1>>>(start, warm, steps, (unsigned long long*)c.d_sink, c.d_cyc);
    else k_chase<1><<<1, 1>>>(start, warm, steps, (unsigned long long*)c.d_sink, c.d_cyc);
    CKL();
    long long cyc;
    CK(cudaMemcpy(&cyc, c.d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost));
    char param[128];
    snprintf(param, sizeof param, "%s ring of %zu B, nodes %zu B apart, warmed", cache ? "ld.global.cg" : "ld.global.ca",
             bytes, stride);
    row("geometry", name, param, (double)cyc / steps, "cycles");
}

static void bench_geometry(Ctx& c, char* big, size_t big_bytes) {
    // the largest L1: no shared memory carved out of the unified array
    CK(cudaFuncSetAttribute(k_chase<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    unsigned* d_perm;
    CK(cudaMalloc(&d_perm, (big_bytes / 128) * sizeof(unsigned)));
    std::mt19937 rng(777);
    for (int kb : {16, 32, 64, 96, 128, 160, 176, 192, 208, 224, 240, 256, 320})
        chase_row(c, big, d_perm, (size_t)kb << 10, 128, 0, rng, "l1_ring");
    for (int stride_kb : {4, 16, 64})
        for (int lines : {2, 4, 6, 8, 12, 16, 24, 32, 48, 64})
            chase_row(c, big, d_perm, (size_t)lines * (stride_kb << 10), (size_t)stride_kb << 10, 0, rng,
                      ("l1_set_stride" + std::to_string(stride_kb) + "k").c_str());
    for (int mb : {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 56, 64, 96})
        if (((size_t)mb << 20) <= big_bytes) chase_row(c, big, d_perm, (size_t)mb << 20, 128, 1, rng, "l2_ring");
    CK(cudaFree(d_perm));
}

// DRAM latency under load: one thread of block 0 chases a 1 GB ring of 128-byte-apart nodes
// (ld.global.cg, as lat,ld_global_dram_1GB) while the first W warps of every other block stream
// over 512 MB until the chase is done. Each W gives the chase's latency and the bandwidth the
// streamers drew meanwhile: the latency a load sees at that load. What the streamers do:
//   STREAM_READ  float4 reads (ld.global.cg)
//   SCATTERED    one float per lane at a pseudo-random index (each lane its own sector: 32 sectors
//                per warp request), the access of a gather; ``bytes`` then counts the 32-byte
//                sectors requested, not the bytes DRAM delivered
//   STREAM_COPY  a float4 read and a float4 write to a second 512 MB buffer (half the bytes written)
//   STREAM_RRW   two float4 reads and one float4 write (a third written, as y = a x + y)
//   STREAM_WRITE float4 writes only
// The mixed modes tell how writes sharing DRAM change the latency a read sees at a bandwidth.
enum LoadedMode { STREAM_READ = 0, SCATTERED = 1, STREAM_COPY = 2, STREAM_RRW = 3, STREAM_WRITE = 4 };

template <int Mode>
__global__ void __launch_bounds__(1024, 2) k_loaded(unsigned long long start, int steps, const float4* buf,
                                                    float4* out, size_t n, int stream_warps,
                                                    unsigned long long* bytes, volatile int* done,
                                                    unsigned long long* sink, long long* cycles,
                                                    unsigned pause_ns) {
    const int warp = threadIdx.x / 32;
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0) return;
        unsigned long long p = start, g0, g1;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
        long long t0 = clock64();
        for (int i = 0; i < steps; i += 8) {
#pragma unroll
            for (int u = 0; u < 8; u++) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
        }
        long long t1 = clock64();
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
        sink[0] = p;
        cycles[0] = t1 - t0;
        cycles[1] = (long long)(g1 - g0);   // ns: the streamers' bandwidth is over this time
        __threadfence();
        *done = 1;
        return;
    }
    if (warp >= stream_warps) return;
    const size_t threads = (size_t)(gridDim.x - 1) * stream_warps * 32;
    size_t i = ((size_t)(blockIdx.x - 1) * stream_warps * 32 + threadIdx.x) % n;
    const size_t half = n / 2;
    float acc = 0;
    unsigned long long count = 0;
    const float* words = (const float*)buf;
    const size_t n_words = 4 * n;
    unsigned h = (unsigned)i * 2654435761u + 12345u;
    while (true) {
#pragma unroll
        for (int u = 0; u < 16; u++) {
            if (Mode == SCATTERED) {
                h = h * 1664525u + 1013904223u;   // per-lane LCG: independent random words
                // n_words is a power of two (a 512 MB buffer): a mask, not a 64-bit division
                acc += __ldcg(words + (((size_t)(h ^ (h >> 15)) * 2654435761ull) & (n_words - 1)));
            } else {
                if (Mode == STREAM_READ) {
                    float4 v = __ldcg(buf + i);
                    acc += v.x + v.y + v.z + v.w;
                } else if (Mode == STREAM_COPY) {
                    float4 v = __ldcg(buf + i);
                    __stcg(out + i, make_float4(v.x * 1.5f, v.y, v.z, v.w));
                } else if (Mode == STREAM_RRW) {
                    const size_t j = i + half < n ? i + half : i + half - n;
                    float4 a = __ldcg(buf + i), b = __ldcg(buf + j);
                    __stcg(out + i, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
                } else {
                    __stcg(out + i, make_float4((float)i, (float)count, 1.0f, 2.0f));
                }
                i += threads;
                if (i >= n) i -= n;
            }
        }
        count += 16;
        if (pause_ns) __nanosleep(pause_ns);   // a lighter load: a pause after each 16 requests
        if (*done) break;
    }
    const unsigned long long per = Mode == SCATTERED ? 32 : Mode == STREAM_COPY ? 32 : Mode == STREAM_RRW ? 48 : 16;
    atomicAdd(bytes, count * per);
    if (acc == 1.2345f) sink[1] = (unsigned long long)acc;
}

// Incompressible stream data (a zero buffer can be read faster than DRAM delivers data).
__global__ void k_fill_noise(float4* buf, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13) * 40503u;
        buf[i] = make_float4(__uint_as_float(h | 1u), __uint_as_float(h * 3u + 7u), __uint_as_float(h ^ 0x5bd1e995u),
                             __uint_as_float(h * 2246822519u));
    }
}

template <int Mode>
static void bench_loaded(Ctx& c, char* big, size_t big_bytes) {
    constexpr bool Scattered = Mode == SCATTERED;
    size_t n_nodes = big_bytes / RING_STRIDE;
    unsigned* d_perm;
    CK(cudaMalloc(&d_perm, n_nodes * sizeof(unsigned)));
    std::mt19937 rng(777);
    std::vector<unsigned> perm = make_ring(big, d_perm, n_nodes, rng);
    CK(cudaFree(d_perm));
    unsigned long long start = (unsigned long long)(big + (size_t)perm[0] * RING_STRIDE);
    size_t stream_bytes = 512u << 20;
    float4* buf;
    CK(cudaMalloc(&buf, stream_bytes));
    k_fill_noise<<<1024, 256>>>(buf, stream_bytes / sizeof(float4));
    CKL();
    float4* out = nullptr;     // the written buffer of the mixed modes
    if (Mode >= STREAM_COPY) CK(cudaMalloc(&out, stream_bytes));
    unsigned long long* d_bytes;
    int* d_done;
    CK(cudaMalloc(&d_bytes, sizeof(unsigned long long)));
    CK(cudaMalloc(&d_done, sizeof(int)));
    measure_clock_mhz(c);
    const int steps = 4096;
    // (streaming warps per block, pause in ns after each 16 requests): a scattered load saturates
    // DRAM with one warp per block, so its lighter loads come from pauses
    std::vector<std::pair<int, unsigned>> levels;
    if (Scattered) {
        levels = {{0, 0}, {1, 32000}, {1, 16000}, {1, 8000}, {1, 4000}, {1, 2000}, {1, 1000}, {1, 500},
                  {1, 0}, {4, 0}, {16, 0}};
    } else {
        for (int w : {0, 1, 2, 4, 8, 16, 32}) levels.push_back({w, 0u});
    }
    for (auto [w, pause] : levels) {
        CK(cudaMemset(d_bytes, 0, sizeof(unsigned long long)));
        CK(cudaMemset(d_done, 0, sizeof(int)));
        k_loaded<Mode><<<2 * c.sms, 1024>>>(start, steps, buf, out, stream_bytes / sizeof(float4), w, d_bytes,
                                            d_done, (unsigned long long*)c.d_sink, c.d_cyc, pause);
        CKL();
        long long cyc[2];
        unsigned long long bytes;
        CK(cudaMemcpy(cyc, c.d_cyc, sizeof(cyc), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&bytes, d_bytes, sizeof(bytes), cudaMemcpyDeviceToHost));
        char param[96];
        snprintf(param, sizeof param, "%d streaming warps per block (%d per SM) pause %u ns", w, 2 * w, pause);
        // scattered: "sector_gbps" = 32-byte sectors requested per ns (what DRAM delivers per sector
        // is the profile's business: 64 bytes for an isolated one); its rows name the pause too
        const char* tags[] = {"", "scattered_", "copy_", "rrw_", "write_"};
        const std::string tag = tags[Mode];
        const std::string level = (Scattered ? "_p" + std::to_string(pause) : std::string()) + "_w" + std::to_string(w);
        row("loaded", tag + "dram_latency" + level, param, (double)cyc[0] / steps, "cycles");
        row("loaded", tag + (Scattered ? "sector_gbps" : "dram_gbps") + level, param, bytes / (double)cyc[1], "GB/s");
        row("loaded", tag + "sm_mhz" + level, param, cyc[0] / (double)cyc[1] * 1e3, "MHz");
    }
    CK(cudaFree(buf));
    if (out) CK(cudaFree(out));
    CK(cudaFree(d_bytes));
    CK(cudaFree(d_done));
}

// ------------------------------------------------------------------------------------------
// Global-memory bandwidth: every SM full (4 blocks x 512 threads), float4 accesses.

// Each pass covers `chunks` whole chunks of U * (threads in the grid) float4 elements, so the
// host knows the exact byte count.
template <int MODE, int U>  // MODE 0: read (DRAM), 1: write (DRAM), 2: read of an L2-resident buffer
__global__ void __launch_bounds__(512, 4) k_bw(float4* buf, size_t chunks, int passes, float* sink, BlockRec* rec) {
    __syncthreads();
    long long t0 = clock64();
    float acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; p++) {
        for (size_t ch = 0; ch < chunks; ch++) {
            size_t i = ch * U * stride + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
            if (MODE == 1) {
                float4 v = make_float4(acc, 1.f, 2.f, 3.f);
#pragma unroll
                for (int u = 0; u < U; u++) buf[i + u * stride] = v;
            } else {
                float4 v[U];
#pragma unroll
                for (int u = 0; u < U; u++) v[u] = __ldcg(buf + i + u * stride);
#pragma unroll
                for (int u = 0; u < U; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
            }
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (acc == 1.2345f) sink[0] = acc;
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

static void bench_bw(Ctx& c, char* big, size_t big_bytes) {
    int blocks = 4 * c.sms;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int mode = 0; mode < 3; mode++) {
        size_t bytes = mode == 2 ? (16u << 20) : big_bytes;  // 16 MB < L2 (50 MB)
        int passes = mode == 2 ? 64 : 1;
        int U = mode == 2 ? 1 : 4;
        size_t threads = (size_t)blocks * 512;
        size_t chunks = bytes / 16 / (U * threads);
        float ms = 0;
        double span = 0, bps = 0;
        for (int rep = 0; rep < 3; rep++) {
            CK(cudaEventRecord(e0));
            if (mode == 0) k_bw<0, 4><<<blocks, 512>>>((float4*)big, chunks, passes, (float*)c.d_sink, c.d_rec);
            if (mode == 1) k_bw<1, 4><<<blocks, 512>>>((float4*)big, chunks, passes, (float*)c.d_sink, c.d_rec);
            if (mode == 2) k_bw<2, 1><<<blocks, 512>>>((float4*)big, chunks, passes, (float*)c.d_sink, c.d_rec);
            CK(cudaEventRecord(e1));
            CKL();
            CK(cudaEventElapsedTime(&ms, e0, e1));
            span = sm_span(c, blocks, &bps);
        }
        double total = (double)chunks * U * threads * 16 * passes;
        const char* name = mode == 0 ? "dram_read" : mode == 1 ? "dram_write" : "l2_read";
        row("bw", name, "bytes/cycle/SM from clock64 span per SM", total / c.sms / span, "B/cycle/SM");
        row("bw", name, "bytes moved", total, "B");
        row("bw", name, "GB/s whole GPU from CUDA events", total / (ms * 1e-3) / 1e9, "GB/s");
    }
}

// ------------------------------------------------------------------------------------------
// bar.sync: one block, a loop of back-to-back barriers.

__global__ void k_bar(int iters, long long* cycles, BlockRec* rec) {
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) asm volatile("bar.sync 0;" ::: "memory");
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) {
        cycles[0] = t1 - t0;
        if (rec) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
    }
}

static void bench_bar(Ctx& c) {
    for (int nt = 32; nt <= 1024; nt *= 2) {
        long long cyc[2];
        int its[2] = {32, 160};
        for (int k = 0; k < 2; k++) {
            for (int rep = 0; rep < 2; rep++) {
                k_bar<<<1, nt>>>(its[k], c.d_cyc, nullptr);
                CKL();
            }
            CK(cudaMemcpy(&cyc[k], c.d_cyc, sizeof(long long), cudaMemcpyDeviceToHost));
        }
        row("bar", "bar_sync", std::to_string(nt), (double)(cyc[1] - cyc[0]) / ((its[1] - its[0]) * 8.0), "cycles");
    }
    // Throughput: every SM full of 64-thread blocks (32 per SM), all looping on bar.sync.
    int blocks = 32 * c.sms;
    double span[2], bps = 0;
    int its[2] = {32, 160};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_bar<<<blocks, 64>>>(its[k], c.d_cyc, c.d_rec);
            CKL();
        }
        span[k] = sm_span(c, blocks, &bps);
    }
    double wi = bps * 2 * (its[1] - its[0]) * 8.0;  // warp-level bar.sync instructions per SM
    row("cpi", "bar_sync", "bar.sync 64-thread blocks x 32 per SM", (span[1] - span[0]) / wi, "cycles/warp-instr/SM");
}

// ------------------------------------------------------------------------------------------
// Block launch: empty kernels of W full waves; the slope of time over W is the cost of a wave.

__global__ void k_empty() {}

// The median over `reps` runs of `launch()` (events around each), in SM cycles at `clock_mhz`.
template <class Launch>
static double median_cycles(int reps, double clock_mhz, cudaEvent_t e0, cudaEvent_t e1, Launch launch) {
    std::vector<float> t;
    for (int rep = 0; rep < reps; rep++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CKL();
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2] * 1e-3 * clock_mhz * 1e6;
}

// Least-squares slope of ys over xs (k points): the per-unit cost, free of a fixed launch cost.
static double fitted_slope(const double* xs, const double* ys, int k) {
    double mx = 0, my = 0;
    for (int i = 0; i < k; i++) mx += xs[i] / k, my += ys[i] / k;
    double sxy = 0, sxx = 0;
    for (int i = 0; i < k; i++) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) * (xs[i] - mx);
    return sxy / sxx;
}

static void bench_launch(Ctx& c, double clock_mhz) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int nt = 32; nt <= 1024; nt *= 2) {
        int per_sm = std::min(32, 2048 / nt);
        int wave = per_sm * c.sms;
        const int K = 5;
        int waves[K] = {16, 32, 64, 128, 256};
        double xs[K], ys[K];
        for (int k = 0; k < K; k++) {
            xs[k] = waves[k];
            ys[k] = median_cycles(15, clock_mhz, e0, e1, [&] { k_empty<<<wave * waves[k], nt>>>(); });
        }
        const double slope = fitted_slope(xs, ys, K);
        row("launch", "wave", std::to_string(nt) + " threads x " + std::to_string(per_sm) + " blocks/SM", slope,
            "cycles/wave");
    }
}

// Block turnaround: how long a block slot of an SM takes per block when few blocks fit (dynamic
// shared memory cuts residency to r blocks of 256 threads). The slope of elapsed cycles over
// blocks per SM, times r, is one slot's time per block: the body's own time plus the time from
// one block's end to the next one's start on that slot. Bodies: nothing; one coalesced store per
// thread; a copy (a DRAM load, then a store); a clock64 spin of 2,000 cycles.
enum TurnBody { TURN_EMPTY, TURN_STORE, TURN_COPY, TURN_SPIN };

template <int Body>
__global__ void k_turn(float* out, const float* in, long long spin) {
    extern __shared__ float reserved[];   // never touched: only cuts how many blocks fit
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (Body == TURN_STORE) out[i] = 1.0f;
    if (Body == TURN_COPY) out[i] = in[i];
    if (Body == TURN_SPIN) {
        long long t0 = clock64();
        while (clock64() - t0 < spin) {
        }
        if (threadIdx.x == 1024) reserved[0] = 0.f;   // never: keeps the declaration
    }
}

// ``nt`` threads a block at ``rs`` blocks per SM; rows ``<name>_r<r>`` for 256 threads, else
// ``<name>_t<nt>_r<r>``.
template <int Body>
static void bench_turn_body(Ctx& c, double clock_mhz, const char* name, float* big, size_t big_floats,
                            int nt = 256, std::initializer_list<int> rs = {1, 2, 4}) {
    CK(cudaFuncSetAttribute(k_turn<Body>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    size_t window = 0;
    for (int r : rs) {
        const size_t smem = r == 1 ? 200 * 1024 : r == 2 ? 100 * 1024 : 50 * 1024;
        const int K = 4;
        int per_sm[K] = {16, 32, 64, 128};
        double xs[K], ys[K];
        for (int k = 0; k < K; k++) {
            const size_t blocks = (size_t)per_sm[k] * c.sms, n = blocks * nt;
            xs[k] = per_sm[k];
            ys[k] = median_cycles(9, clock_mhz, e0, e1, [&] {
                // input and output move through the 1 GB buffer, so a copy reads DRAM, not L2
                if ((window + 2) * n > big_floats) window = 0;
                float* out = big + window * n;
                const float* in = big + (window + 1) * n;
                window += 2;
                k_turn<Body><<<blocks, nt, smem>>>(out, in, 2000);
            });
        }
        const double slope = fitted_slope(xs, ys, K);   // cycles per block per SM
        const std::string threads = nt == 256 ? "" : "_t" + std::to_string(nt);
        row("turn", std::string(name) + threads + "_r" + std::to_string(r),
            std::to_string(nt) + " threads " + std::to_string(r) + " blocks/SM (smem " + std::to_string(smem / 1024) + " KB) cycles per block per slot",
            slope * r, "cycles");
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

static void bench_turnaround(Ctx& c, double clock_mhz, char* big, size_t big_bytes) {
    float* f = (float*)big;
    const size_t n = big_bytes / sizeof(float);
    bench_turn_body<TURN_EMPTY>(c, clock_mhz, "empty", f, n);
    bench_turn_body<TURN_STORE>(c, clock_mhz, "store", f, n);
    bench_turn_body<TURN_COPY>(c, clock_mhz, "copy", f, n);
    bench_turn_body<TURN_SPIN>(c, clock_mhz, "spin2000", f, n);
}

// A copy's block at one block per SM with 2 to 32 warps: whether a block's DRAM wait grows with
// the loads its SM (and every other) issues at once.
static void bench_turn_warps(Ctx& c, double clock_mhz, char* big, size_t big_bytes) {
    float* f = (float*)big;
    const size_t n = big_bytes / sizeof(float);
    for (int nt : {64, 128, 512, 1024}) bench_turn_body<TURN_COPY>(c, clock_mhz, "copy", f, n, nt, {1});
    bench_turn_body<TURN_EMPTY>(c, clock_mhz, "empty", f, n, 1024, {1});
}

// ------------------------------------------------------------------------------------------
// Instruction mix (001 section 4.2): BETA fma.rn.f32 then one ex2.approx.ftz.f32, repeated.

template <int BETA>
__global__ void __launch_bounds__(THR_THREADS, 2) k_mix(int iters, float* sink, BlockRec* rec) {
    float a[4] = {1.f + threadIdx.x, 2.f, 3.f, 4.f};
    float s = -100.f + (threadIdx.x & 7);
    const float y = 0.999999f;
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) {
#pragma unroll
            for (int b = 0; b < BETA; b++) asm volatile("fma.rn.f32 %0, %0, %1, %1;" : "+f"(a[b & 3]) : "f"(y));
            asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(s));
        }
    }
    __syncthreads();
    long long t1 = clock64();
    sink[blockIdx.x * blockDim.x + threadIdx.x] = a[0] + a[1] + a[2] + a[3] + s;
    if (threadIdx.x == 0) rec[blockIdx.x] = BlockRec{smid(), 0, t0, t1};
}

template <int BETA>
static void bench_mix_one(Ctx& c) {
    int blocks = 2 * c.sms;
    double span[2], bps = 0;
    int its[2] = {8, 24};
    for (int k = 0; k < 2; k++) {
        for (int rep = 0; rep < 2; rep++) {
            k_mix<BETA><<<blocks, THR_THREADS>>>(its[k], (float*)c.d_sink, c.d_rec);
            CKL();
        }
        span[k] = sm_span(c, blocks, &bps);
    }
    double groups = bps * 32 * (double)(its[1] - its[0]) * 8;  // per SM, warp level
    double cyc = span[1] - span[0];
    row("mix", "ipc_total", std::to_string(BETA), groups * (BETA + 1) / cyc, "warp-instr/cycle/SM");
    row("mix", "ipc_alu", std::to_string(BETA), groups * BETA / cyc, "warp-instr/cycle/SM");
}

static void bench_mix(Ctx& c) {
    bench_mix_one<0>(c);
    bench_mix_one<1>(c);
    bench_mix_one<2>(c);
    bench_mix_one<3>(c);
    bench_mix_one<4>(c);
    bench_mix_one<6>(c);
    bench_mix_one<8>(c);
    bench_mix_one<12>(c);
    bench_mix_one<16>(c);
    bench_mix_one<24>(c);
    bench_mix_one<32>(c);
    bench_mix_one<48>(c);
    bench_mix_one<64>(c);
}

// ------------------------------------------------------------------------------------------

int main(int argc, char** argv) {
    Ctx c;
    c.dev = 0;
    CK(cudaSetDevice(c.dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, c.dev));
    c.sms = prop.multiProcessorCount;
    printf("bench,name,param,value,unit\n");
    row("env", "device", prop.name, c.sms, "SMs");
    int clk = 0;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, c.dev));
    row("env", "clock_rate_attr", "cudaDevAttrClockRate", clk / 1000.0, "MHz");
    row("env", "l2_bytes", "l2CacheSize", prop.l2CacheSize, "B");
    std::string only = argc > 1 ? argv[1] : "all";
    auto want = [&](const char* s) { return only == "all" || only.find(s) != std::string::npos; };

    c.h_rec.resize(32 * c.sms);
    CK(cudaMalloc(&c.d_rec, sizeof(BlockRec) * 32 * c.sms));
    CK(cudaMalloc(&c.d_sink, 8 * 1024 * c.sms * 8));
    CK(cudaMalloc(&c.d_cyc, 64));

    double mhz = measure_clock_mhz(c);
    row("env", "sm_clock", "clock64 / globaltimer after 10 ms busy", mhz, "MHz");

    if (want("ops")) {
        measure_clock_mhz(c);
        bench_op<add_f32>(c);
        bench_op<mul_f32>(c);
        bench_op<fma_f32>(c);
        bench_op<add_f64>(c);
        bench_op<fma_f64>(c);
        bench_op<add_s32_pair>(c);
        bench_op<mul_s32>(c);
        bench_op<mad_s32>(c);
        bench_op<cvt_f32_s32>(c);
        bench_op<cvt_s32_f32>(c);
        bench_op<cvt_f64_f32>(c);
        bench_op<sin_approx>(c);
        bench_op<cos_approx>(c);
        bench_op<ex2_approx>(c);
        bench_op<ex2_approx_ftz>(c);
        bench_op<rcp_approx>(c);
        bench_op<sqrt_approx>(c);
        bench_op<rsqrt_approx>(c);
        bench_op<rcp_approx_ftz_add>(c);
        bench_op<sqrt_approx_ftz>(c);
        bench_op<rsqrt_approx_ftz>(c);
        bench_op<div_rn_f32>(c);
        bench_op<div_full_f32>(c);
        bench_op<div_rn_f64>(c);
    }
    if (want("half")) {
        measure_clock_mhz(c);
        bench_op<fma_f16x2>(c);
        bench_op<add_f16x2>(c);
        bench_op<mul_f16x2>(c);
        bench_op<fma_bf16x2>(c);
    }
    if (want("geometry")) {
        measure_clock_mhz(c);
        size_t gb = 128u << 20;
        char* gbig;
        CK(cudaMalloc(&gbig, gb));
        bench_geometry(c, gbig, gb);
        CK(cudaFree(gbig));
    }
    if (want("linethr")) {
        measure_clock_mhz(c);
        bench_lines(c, false);
    }
    if (want("linediag")) {
        measure_clock_mhz(c);
        bench_lines(c, true);
    }
    if (want("tensor")) {
        measure_clock_mhz(c);
        bench_op<wmma_f32>(c);
        bench_op<mma_m16n8k16_f32>(c);
    }
    if (want("shared")) bench_shared(c);
    if (want("local")) bench_local(c);
    if (want("bar")) bench_bar(c);
    if (want("mix")) bench_mix(c);
    if (want("global") || want("bw") || want("loaded") || want("scattered") || want("mixed") || want("lanes") ||
        want("turn") || want("turnwarps")) {
        size_t big_bytes = 1u << 30, flush_bytes = 256u << 20;
        char* big;
        float4* flush;
        CK(cudaMalloc(&big, big_bytes));
        CK(cudaMalloc(&flush, flush_bytes));
        CK(cudaMemset(big, 0, big_bytes));
        CK(cudaMemset(flush, 0, flush_bytes));
        if (want("global")) bench_global_lat(c, big, big_bytes, flush, flush_bytes);
        if (want("loaded") || want("mixed")) bench_loaded<STREAM_READ>(c, big, big_bytes);
        if (want("loaded") || want("scattered")) bench_loaded<SCATTERED>(c, big, big_bytes);
        if (want("mixed")) {
            bench_loaded<STREAM_COPY>(c, big, big_bytes);
            bench_loaded<STREAM_RRW>(c, big, big_bytes);
            bench_loaded<STREAM_WRITE>(c, big, big_bytes);
        }
        if (want("turn")) bench_turnaround(c, measure_clock_mhz(c), big, big_bytes);
        if (want("turnwarps")) bench_turn_warps(c, measure_clock_mhz(c), big, big_bytes);
        if (want("lanes")) bench_lanes_lat(c, big, big_bytes, flush, flush_bytes);
        if (want("bw")) {
            measure_clock_mhz(c);
            bench_bw(c, big, big_bytes);
        }
        CK(cudaFree(big));
        CK(cudaFree(flush));
    }
    if (want("launch")) {
        double m = measure_clock_mhz(c);
        row("env", "sm_clock_before_launch", "clock64 / globaltimer", m, "MHz");
        bench_launch(c, m);
    }
    mhz = measure_clock_mhz(c);
    row("env", "sm_clock_end", "clock64 / globaltimer after 10 ms busy", mhz, "MHz");
    return 0;
}
