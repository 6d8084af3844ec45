// Small kernels whose results the interpreter (engine.execution) must reproduce exactly.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo kernels.cu -o kernels.sm_90.ptx
extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void triangle(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = 0;
    for (int j = 0; j < (threadIdx.x % 7); ++j) s += j * j + i;
    if (i < n) out[i] = s;
}

extern "C" __global__ void block_sum(float *out, const float *in) {
    __shared__ float part[256];
    int t = threadIdx.x;
    part[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (t < step) part[t] += part[t + step];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = part[0];
}

extern "C" __global__ void warp_sum(int *out) {
    int v = threadIdx.x & 31;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) out[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = v;
}

extern "C" __global__ void histogram(int *hist, const int *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[data[i] & 15], 1);
}

extern "C" __global__ void collatz_steps(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = i + 1;
    int steps = 0;
    while (v != 1) { v = (v & 1) ? 3 * v + 1 : v / 2; ++steps; }
    out[i] = steps;
}

extern "C" __global__ void local_sort4(int *out, const int *in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int a[4];
    for (int k = 0; k < 4; ++k) a[k] = in[4 * i + k];
    for (int p = 0; p < 4; ++p)
        for (int q = 0; q + 1 < 4 - p; ++q)
            if (a[q] > a[q + 1]) { int t = a[q]; a[q] = a[q + 1]; a[q + 1] = t; }
    volatile int idx = in[4 * i] & 3;
    out[i] = a[idx];
}

extern "C" __global__ void serial_in_thread0(int *out, int n) {
    __shared__ int total;
    if (threadIdx.x == 0) {
        int s = 0;
        for (int k = 0; k < n; ++k) s += k;
        total = s;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = total + threadIdx.x;
}
