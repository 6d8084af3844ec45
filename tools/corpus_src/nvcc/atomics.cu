// Corpus: atomics on global and shared memory, CAS loops, fences.
__device__ float atomic_max_float(float *addr, float v)
{
    int *a = reinterpret_cast<int *>(addr);
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (old != assumed);
    return __int_as_float(old);
}

__global__ void histogram256(const unsigned char *data, unsigned *hist, int n)
{
    __shared__ unsigned local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}

__global__ void misc_atomics(const float *x, float *fmax_out, double *dsum, int *imin,
                             unsigned long long *counter, int *flag, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomic_max_float(fmax_out, x[i]);
    atomicAdd(dsum, (double)x[i]);
    atomicMin(imin, (int)x[i]);
    atomicAnd(flag + 1, ~(1 << (i & 31)));
    atomicOr(flag + 2, 1 << (i & 31));
    atomicXor(flag + 3, i);
    atomicInc((unsigned *)flag + 4, 1000u);
    const unsigned long long ticket = atomicAdd(counter, 1ull);
    if (ticket == (unsigned long long)n - 1) {
        __threadfence();
        atomicExch(flag, 1);
    }
}

__global__ void last_block_done(const float *partial, float *result, unsigned *arrived, int blocks)
{
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
        __threadfence();
        const unsigned ticket = atomicAdd(arrived, 1u);
        is_last = (ticket == (unsigned)blocks - 1);
    }
    __syncthreads();
    if (is_last && threadIdx.x == 0) {
        float s = 0.0f;
        for (int b = 0; b < blocks; ++b) s += partial[b];
        *result = s;
        *arrived = 0;
    }
}
