// Warpline validation suite v2x (tuning supplement), family "segments": variable-length
// segments given by an offsets array (CSR row pointers), 4 to 28 elements each at random.
//   seg_sum_thread     : one thread per segment sums it (divergent trip counts; each lane walks
//                        its own segment, so a warp's reads are spread over 32 segments)
//   seg_lookup_bsearch : one thread per element finds its segment by binary search over the
//                        offsets (about 20 dependent reads), then scales the element by the
//                        segment's weight
// Inputs: offsets / values from a random CSR structure; w segment weights; out floats.

__global__ void seg_sum_thread(const int *__restrict__ offsets, const float *__restrict__ values,
                               float *__restrict__ out, int segments)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= segments)
        return;
    float acc = 0.0f;
    const int end = offsets[s + 1];
    for (int p = offsets[s]; p < end; ++p)
        acc += values[p];
    out[s] = acc;
}

__global__ void seg_lookup_bsearch(const int *__restrict__ offsets, const float *__restrict__ values,
                                   const float *__restrict__ w, float *__restrict__ out, int segments, int n)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    int lo = 0;
    int hi = segments;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (offsets[mid + 1] <= e)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[e] = values[e] * w[lo];
}
