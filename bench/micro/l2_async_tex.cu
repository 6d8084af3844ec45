// Warpline microbenchmark: the rate at which an SM reads L2-resident data through the paths
// compiled kernels use (LDG of 16 bytes per lane, cp.async.cg of 16 bytes per lane into shared
// memory in a multi-stage ring), and the rate of the texture pipe for 1-D fetches that hit L1.
// Run under Nsight Compute, which gives each launch's cycles and L2 / texture counts:
//   ncu --csv --metrics gpc__cycles_elapsed.max,lts__t_bytes.sum,l1tex__t_requests_pipe_tex.sum,\
//       l1tex__f_wavefronts.sum,smsp__inst_executed_pipe_tex.sum ./l2_async_tex
// Every kernel runs on a full grid (4 blocks of 256 threads per SM, or 8 blocks of 128 for the
// cp.async ring) over a buffer of L2_MB megabytes that stays in L2 (read once before, untimed).
//   k_ldg_l2      : grid-stride __ldcg of float4, 4 independent loads per thread per step
//   k_cpasync_l2  : each block streams its share of the buffer through a 4-stage ring of 128 x 16 B
//                   cp.async.cg copies (commit per stage, wait_group 2), reading one word per stage
//   k_ldg_window  : every block reads the same WINDOW_KB window (__ldcg float4, 4 loads per step):
//                   all SMs want the same lines at about the same time
//   k_tex_l1      : 256 tex1Dfetch<float> per thread from an 8 KB texture, consecutive lanes read
//                   consecutive texels (L1-resident after the first pass)
//   k_tex_l1_same : the same, every lane of a warp at one texel
//   k_ldg_l1      : the same pattern as k_tex_l1 through ld.global.nc (__ldg)
// Stdout lists the launches in the order ncu sees them, with the bytes / fetches each one makes.
//
// Build: nvcc -O3 -arch=sm_90 -o l2_async_tex l2_async_tex.cu

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

static const size_t L2_MB = 16;
static const int PASSES = 8;
static const int TEX_ITERS = 256;
static const size_t WINDOW_KB = 1024;
static const int WINDOW_PASSES = 4;
static const int TEX_TEXELS = 2048;   // 8 KB

__global__ void k_ldg_l2(const float4* __restrict__ in, size_t n, int passes, float* sink) {
    float acc = 0.f;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i + 3 * stride < n; i += 4 * stride) {
            float4 v0 = __ldcg(in + i), v1 = __ldcg(in + i + stride), v2 = __ldcg(in + i + 2 * stride),
                   v3 = __ldcg(in + i + 3 * stride);
            acc += v0.x + v1.y + v2.z + v3.w;
        }
    }
    if (acc == 1.2345f) sink[0] = acc;
}

// every block reads the same window of n float4 (all SMs at once: the lines every SM wants)
__global__ void k_ldg_window(const float4* __restrict__ in, size_t n, int passes, float* sink) {
    float acc = 0.f;
    const size_t step = blockDim.x;
    for (int p = 0; p < passes; ++p) {
        for (size_t i = threadIdx.x; i + 3 * step < n; i += 4 * step) {
            float4 v0 = __ldcg(in + i), v1 = __ldcg(in + i + step), v2 = __ldcg(in + i + 2 * step),
                   v3 = __ldcg(in + i + 3 * step);
            acc += v0.x + v1.y + v2.z + v3.w;
        }
    }
    if (acc == 1.2345f) sink[0] = acc;
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}

__global__ void k_cpasync_l2(const float4* __restrict__ in, size_t n, int passes, float* sink) {
    const int STAGES = 4;
    __shared__ float4 ring[STAGES][128];
    float acc = 0.f;
    // block b streams tiles b, b + grid, b + 2 grid, ... of 128 float4 (2 KB)
    const size_t tiles = n / 128;
    for (int p = 0; p < passes; ++p) {
        size_t t = blockIdx.x;
        int issued = 0;
        for (int s = 0; s < STAGES - 1; ++s, t += gridDim.x) {
            if (t < tiles) cp_async16(&ring[issued % STAGES][threadIdx.x], in + t * 128 + threadIdx.x);
            asm volatile("cp.async.commit_group;" ::: "memory");
            ++issued;
        }
        for (size_t u = blockIdx.x; u < tiles; u += gridDim.x) {
            if (t < tiles) cp_async16(&ring[issued % STAGES][threadIdx.x], in + t * 128 + threadIdx.x);
            asm volatile("cp.async.commit_group;" ::: "memory");
            ++issued;
            t += gridDim.x;
            asm volatile("cp.async.wait_group 3;" ::: "memory");
            __syncthreads();
            acc += ring[(issued - STAGES) % STAGES][(threadIdx.x * 7) & 127].x;
            __syncthreads();
        }
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        __syncthreads();
    }
    if (acc == 1.2345f) sink[0] = acc;
}

__global__ void k_tex_l1(cudaTextureObject_t tex, int iters, int same, float* sink) {
    float acc = 0.f;
    const int lane = same ? 0 : (threadIdx.x & 31);
    int base = (threadIdx.x >> 5) * 32;
    for (int k = 0; k < iters; ++k) {
        acc += tex1Dfetch<float>(tex, (base + lane) & (TEX_TEXELS - 1));
        base += 32;
    }
    if (acc == 1.2345f) sink[0] = acc;
}

__global__ void k_ldg_l1(const float* __restrict__ in, int iters, float* sink) {
    float acc = 0.f;
    const int lane = threadIdx.x & 31;
    int base = (threadIdx.x >> 5) * 32;
    for (int k = 0; k < iters; ++k) {
        acc += __ldg(in + ((base + lane) & (TEX_TEXELS - 1)));
        base += 32;
    }
    if (acc == 1.2345f) sink[0] = acc;
}

int main() {
    int dev = 0, sms = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const size_t n = L2_MB * (1u << 20) / sizeof(float4);
    float4* buf;
    float* sink;
    float* small;
    CK(cudaMalloc(&buf, n * sizeof(float4)));
    CK(cudaMemset(buf, 0, n * sizeof(float4)));
    CK(cudaMalloc(&sink, 64));
    CK(cudaMalloc(&small, TEX_TEXELS * sizeof(float)));
    CK(cudaMemset(small, 0, TEX_TEXELS * sizeof(float)));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeLinear;
    rd.res.linear.devPtr = small;
    rd.res.linear.desc = cudaCreateChannelDesc<float>();
    rd.res.linear.sizeInBytes = TEX_TEXELS * sizeof(float);
    cudaTextureDesc td = {};
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &rd, &td, nullptr));

    const int g4 = 4 * sms, g8 = 8 * sms;
    printf("launch,kernel,grid,block,bytes_or_fetches\n");
    int order = 0;
    for (int rep = 0; rep < 2; ++rep) {
        // warm: the buffer into L2 (ncu's cache control is off in the script: --cache-control none)
        k_ldg_l2<<<g4, 256>>>(buf, n, 1, sink);
        printf("%d,warm,%d,256,%zu\n", order++, g4, n * 16);
        k_ldg_l2<<<g4, 256>>>(buf, n, PASSES, sink);
        printf("%d,ldg_l2,%d,256,%zu\n", order++, g4, n * 16 * PASSES);
        k_cpasync_l2<<<g8, 128>>>(buf, n, PASSES, sink);
        printf("%d,cpasync_l2,%d,128,%zu\n", order++, g8, n * 16 * PASSES);
        {
            const size_t w = WINDOW_KB * 1024 / sizeof(float4);
            k_ldg_window<<<g4, 256>>>(buf, w, WINDOW_PASSES, sink);
            printf("%d,ldg_window,%d,256,%zu\n", order++, g4, (size_t)g4 * (w / 1024) * 1024 * 16 * WINDOW_PASSES);
            // each SM reads a window of its own (offset by block, 16 MB spread): the unique case
            k_ldg_window<<<g4, 256>>>(buf + (size_t)(dev * 0), w, WINDOW_PASSES, sink);
            printf("%d,ldg_window_repeat,%d,256,%zu\n", order++, g4, (size_t)g4 * (w / 1024) * 1024 * 16 * WINDOW_PASSES);
        }
        k_tex_l1<<<g4, 256>>>(tex, TEX_ITERS, 0, sink);
        printf("%d,tex_l1,%d,256,%zu\n", order++, g4, (size_t)g4 * 8 * TEX_ITERS);
        k_tex_l1<<<g4, 256>>>(tex, TEX_ITERS, 1, sink);
        printf("%d,tex_l1_same,%d,256,%zu\n", order++, g4, (size_t)g4 * 8 * TEX_ITERS);
        k_ldg_l1<<<g4, 256>>>(small, TEX_ITERS, sink);
        printf("%d,ldg_l1,%d,256,%zu\n", order++, g4, (size_t)g4 * 8 * TEX_ITERS);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaDestroyTextureObject(tex));
    return 0;
}
