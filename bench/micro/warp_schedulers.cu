// Warpline microbenchmark: which of an SM's four schedulers (SMSPs) issues a block's warps.
// Blocks of W warps (W = 1..8) in which one warp k (or a set of warps) runs a long chain of
// independent FMAs while the others exit at once, R blocks per SM (R = 1, 2, 4, 8: all resident
// together). Two readings:
//   * every warp records its SM, the PTX %warpid (the hardware slot), its warp index in the block
//     and its block: the slot modulo 4 is the scheduler if the slots are dealt that way;
//   * under Nsight Compute, smsp__inst_executed's max over the GPU's schedulers against its mean:
//     4 when every busy warp sits on one scheduler of its SM, 1 when they are spread evenly; and
//     the cycles, which follow the busiest scheduler.
// A third pattern has every warp busy, warp 0 with twice the work (a block scan's first warp).
// Stdout: one CSV of launches (the order ncu sees them), then "slot" lines per launch.
//
// Build: nvcc -O3 -arch=sm_90 -o warp_schedulers warp_schedulers.cu

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static const int STEPS = 4096;

__device__ __forceinline__ unsigned hw_warp_slot() {
    unsigned w;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
    return w;
}

__device__ __forceinline__ unsigned sm_id() {
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// 8 independent FMA chains: one warp can issue about one instruction a cycle
__device__ __forceinline__ float chains(int steps, float seed) {
    float a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3, a4 = seed + 4, a5 = seed + 5,
          a6 = seed + 6, a7 = seed + 7;
    for (int s = 0; s < steps; ++s) {
        a0 = fmaf(a0, 0.999f, 0.5f); a1 = fmaf(a1, 0.999f, 0.5f);
        a2 = fmaf(a2, 0.999f, 0.5f); a3 = fmaf(a3, 0.999f, 0.5f);
        a4 = fmaf(a4, 0.999f, 0.5f); a5 = fmaf(a5, 0.999f, 0.5f);
        a6 = fmaf(a6, 0.999f, 0.5f); a7 = fmaf(a7, 0.999f, 0.5f);
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// busy_mask: bit w set -> warp w of the block runs `steps`; work_of_warp0: warp 0 runs that many
// times `steps` (1 or 2); record: per warp (sm, slot, warp, block) when not null
__global__ void k_busy(unsigned busy_mask, int steps, int warp0_factor, float* sink, unsigned* record) {
    const unsigned warp = threadIdx.x / 32;
    const unsigned lane = threadIdx.x % 32;
    if (record && lane == 0) {
        const unsigned w = blockIdx.x * (blockDim.x / 32) + warp;
        record[4 * w + 0] = sm_id();
        record[4 * w + 1] = hw_warp_slot();
        record[4 * w + 2] = warp;
        record[4 * w + 3] = blockIdx.x;
    }
    if (!(busy_mask >> warp & 1u)) return;
    const int n = warp == 0 ? steps * warp0_factor : steps;
    const float r = chains(n, (float)threadIdx.x);
    if (r == 1.2345f) sink[0] = r;
}

struct Case {
    const char* name;
    int warps;
    unsigned mask;
    int factor;
    int blocks_per_sm;
};

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<Case> cases;
    const int rs[] = {1, 2, 4, 8};
    for (int r : rs) {
        for (int w = 1; w <= 8; ++w) {
            cases.push_back({"first", w, 1u, 1, r});                       // only warp 0 busy
            if (w > 1) cases.push_back({"last", w, 1u << (w - 1), 1, r});  // only the last warp busy
        }
        cases.push_back({"all_w0x2", 8, 0xFFu, 2, r});   // 8 warps busy, warp 0 twice the work
        cases.push_back({"all_w0x2", 4, 0xFu, 2, r});
        cases.push_back({"all", 8, 0xFFu, 1, r});
    }
    float* sink;
    unsigned* record;
    const size_t max_warps = (size_t)sms * 8 * 8;
    CK(cudaMalloc(&sink, 64));
    CK(cudaMalloc(&record, max_warps * 4 * sizeof(unsigned)));
    std::vector<unsigned> host(max_warps * 4);
    printf("launch,case,warps_per_block,busy_mask,warp0_factor,blocks_per_sm,grid,busy_warp_instructions_est\n");
    int order = 0;
    std::vector<std::vector<unsigned>> slots;
    for (const Case& c : cases) {
        const int grid = sms * c.blocks_per_sm;
        // launch 1: records the slots (ncu sees it too; its row says so)
        CK(cudaMemset(record, 0xFF, max_warps * 4 * sizeof(unsigned)));
        k_busy<<<grid, 32 * c.warps>>>(c.mask, STEPS, c.factor, sink, record);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(host.data(), record, (size_t)grid * c.warps * 4 * sizeof(unsigned), cudaMemcpyDeviceToHost));
        // per scheduler (slot % 4), the busy warps and the busy work on SM 0..sms-1 summed
        unsigned busy_per_sched[4] = {0, 0, 0, 0}, all_per_sched[4] = {0, 0, 0, 0};
        for (int i = 0; i < grid * c.warps; ++i) {
            const unsigned slot = host[4 * i + 1], warp = host[4 * i + 2];
            all_per_sched[slot % 4]++;
            if (c.mask >> warp & 1u) busy_per_sched[slot % 4] += (warp == 0 ? c.factor : 1);
        }
        printf("%d,%s-record,%d,0x%x,%d,%d,%d,0\n", order++, c.name, c.warps, c.mask, c.factor, c.blocks_per_sm, grid);
        fprintf(stderr, "slots %s W=%d mask=0x%x f=%d R=%d: busy work per slot%%4 %u %u %u %u; warps %u %u %u %u; SM0 slots",
                c.name, c.warps, c.mask, c.factor, c.blocks_per_sm, busy_per_sched[0], busy_per_sched[1],
                busy_per_sched[2], busy_per_sched[3], all_per_sched[0], all_per_sched[1], all_per_sched[2],
                all_per_sched[3]);
        for (int i = 0; i < grid * c.warps; ++i)
            if (host[4 * i] == 0) fprintf(stderr, " b%u.w%u:%u", host[4 * i + 3], host[4 * i + 2], host[4 * i + 1]);
        fprintf(stderr, "\n");
        // launch 2: the same without recording (the one to time)
        k_busy<<<grid, 32 * c.warps>>>(c.mask, STEPS, c.factor, sink, nullptr);
        long long busy = 0;
        for (int w = 0; w < c.warps; ++w)
            if (c.mask >> w & 1u) busy += (long long)(w == 0 ? c.factor : 1) * STEPS * 8;
        printf("%d,%s,%d,0x%x,%d,%d,%d,%lld\n", order++, c.name, c.warps, c.mask, c.factor, c.blocks_per_sm, grid,
               busy * grid);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    return 0;
}
