// Warpline validation suite v2, family "histogram": integer histograms with atomics.
//   hist_smem   : block-private histogram in dynamic shared memory (nbins counters), filled by a
//                 grid-stride loop with shared-memory atomics, then merged with one global atomic
//                 per non-empty bin
//   hist_global : one global atomicAdd per element, bins spread over nbins addresses
// Inputs: data (n uniform random unsigned ints), bins (nbins unsigned, zeroed).

__global__ void hist_smem(const unsigned *__restrict__ data, unsigned *__restrict__ bins, int n, int nbins)
{
    extern __shared__ unsigned counts[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        counts[b] = 0u;
    __syncthreads();
    const unsigned m = (unsigned)nbins;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&counts[data[i] % m], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        const unsigned c = counts[b];
        if (c != 0u)
            atomicAdd(&bins[b], c);
    }
}

__global__ void hist_global(const unsigned *__restrict__ data, unsigned *__restrict__ bins, int n, int nbins)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i] % (unsigned)nbins], 1u);
}
