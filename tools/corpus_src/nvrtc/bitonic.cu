// Corpus (NVRTC): bitonic sort of 1024-key segments in shared memory (C++ names).
template <typename K>
__device__ void compare_swap(K &a, K &b, bool up)
{
    if ((a > b) == up) { K t = a; a = b; b = t; }
}

template <typename K, int N>
__global__ void bitonic_segment_sort(K *keys)
{
    __shared__ K s[N];
    K *seg = keys + blockIdx.x * N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s[i] = seg[i];
    __syncthreads();
    for (int size = 2; size <= N; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = threadIdx.x; i < N / 2; i += blockDim.x) {
                const int lo = 2 * i - (i & (stride - 1));
                const bool up = ((lo & size) == 0);
                compare_swap(s[lo], s[lo + stride], up);
            }
            __syncthreads();
        }
    }
    for (int i = threadIdx.x; i < N; i += blockDim.x) seg[i] = s[i];
}

template __global__ void bitonic_segment_sort<int, 1024>(int *);
template __global__ void bitonic_segment_sort<float, 512>(float *);
