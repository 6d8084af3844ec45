// Tiled matrix multiply with vector loads, an inline-asm predicate and a device call: fuzz seed.
#define T 16
__device__ __noinline__ float scale(float v, float s) { return v * s + 1.0f; }
__global__ void tile_mm(const float4* a, const float* b, float* c, int n, float s) {
  __shared__ float as[T][T + 1], bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float sum = 0.0;
  for (int k = 0; k < n / T; ++k) {
    float4 v = a[(row * n + k * T) / 4 + (tx & 3)];
    as[ty][tx] = v.x + v.w;
    bs[ty][tx] = b[(k * T + ty) * n + col];
    __syncthreads();
#pragma unroll 4
    for (int j = 0; j < T; ++j) sum += as[ty][j] * bs[j][tx];
    __syncthreads();
  }
  unsigned lane;
  asm volatile("{ .reg .pred p; mov.u32 %0, %%laneid; setp.ne.u32 p, %0, 0; @p add.u32 %0, %0, 1; }" : "=r"(lane));
  if (row < n && col < n) c[row * n + col] = scale(sum, s) + lane;
}
