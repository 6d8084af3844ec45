// Warpline validation suite v2, family "atomics": floating-point atomics, same address and spread.
//   atomic_same_global  : every thread adds its element to out[0] (one global address)
//   atomic_same_shared  : every thread adds `iters` values to one shared-memory float, then
//                         thread 0 adds the block total to out[blockIdx.x % 1024]
//   atomic_spread_global: out[idx[i]] += in[i] (scatter-add, idx uniform random over m slots)
//   atomic_cas_max      : running float maximum per slot (i % nslots) with an atomicCAS retry
//                         loop that runs only while the element beats the slot's value
// Inputs: in uniform random floats in [0, 1), idx ints in range, out floats (zeroed).

__global__ void atomic_same_global(const float *__restrict__ in, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, in[i]);
}

__global__ void atomic_same_shared(const float *__restrict__ in, float *out, int n, int iters)
{
    __shared__ float total;
    if (threadIdx.x == 0)
        total = 0.0f;
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    for (int k = 0; k < iters; ++k)
        atomicAdd(&total, v * (float)(k + 1));
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(&out[blockIdx.x % 1024], total);
}

__global__ void atomic_spread_global(const float *__restrict__ in, const int *__restrict__ idx,
                                     float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[idx[i]], in[i]);
}

__global__ void atomic_cas_max(const float *__restrict__ in, float *out, int n, int nslots)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float v = in[i];
    int *slot = reinterpret_cast<int *>(out + (i % nslots));
    int seen = *reinterpret_cast<volatile int *>(slot);
    while (v > __int_as_float(seen)) {
        const int assumed = seen;
        seen = atomicCAS(slot, assumed, __float_as_int(v));
        if (seen == assumed)
            break;
    }
}
