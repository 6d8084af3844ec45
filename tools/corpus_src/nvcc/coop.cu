// Corpus: cooperative groups (block, tiled partitions, coalesced groups, grid sync).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void cg_tile_reduce(const int *in, int *out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int i = block.group_index().x * block.size() + block.thread_rank();
    const int v = i < n ? in[i] : 0;
    const int s = cg::reduce(warp, v, cg::plus<int>());
    if (warp.thread_rank() == 0) atomicAdd(out, s);
}

__global__ void cg_coalesced(const int *in, int *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        const int rank = active.thread_rank();
        int base = 0;
        if (rank == 0) base = atomicAdd(out, (int)active.size());
        base = active.shfl(base, 0);
        out[1 + base + rank] = i;
    }
}

__global__ void cg_grid_two_pass(float *data, float *partials, int n)
{
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    __shared__ float sm[256];
    float s = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) s += data[i];
    sm[block.thread_rank()] = s;
    block.sync();
    for (int w = 128; w > 0; w >>= 1) {
        if (block.thread_rank() < w) sm[block.thread_rank()] += sm[block.thread_rank() + w];
        block.sync();
    }
    if (block.thread_rank() == 0) partials[blockIdx.x] = sm[0];
    grid.sync();
    const float total = partials[0];
    for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] /= total;
}

__global__ void cg_tile16_scan(const float *in, float *out, int n)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int d = 1; d < 16; d <<= 1) {
        const float u = tile.shfl_up(v, d);
        if ((int)tile.thread_rank() >= d) v += u;
    }
    tile.sync();
    if (i < n) out[i] = v + tile.any(v > 100.0f);
}
