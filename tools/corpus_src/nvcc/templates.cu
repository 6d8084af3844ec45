// Corpus: templates, __launch_bounds__, shared-memory tree reductions.
template <typename T>
struct AddOp { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T>
struct MaxOp { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };

template <typename T, int THREADS, typename Op>
__global__ void __launch_bounds__(THREADS, 2)
block_reduce(const T *in, T *out, int n, T identity)
{
    __shared__ T buf[THREADS];
    Op op;
    T acc = identity;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS)
        acc = op(acc, in[i]);
    buf[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = buf[0];
}

template <typename T, int N>
__global__ void __launch_bounds__(128)
small_matvec(const T *m, const T *x, T *y, int rows)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    T acc = T(0);
#pragma unroll
    for (int c = 0; c < N; ++c)
        acc += m[r * N + c] * x[c];
    y[r] = acc;
}

template __global__ void block_reduce<float, 256, AddOp<float>>(const float *, float *, int, float);
template __global__ void block_reduce<int, 128, MaxOp<int>>(const int *, int *, int, int);
template __global__ void block_reduce<double, 512, AddOp<double>>(const double *, double *, int, double);
template __global__ void small_matvec<float, 8>(const float *, const float *, float *, int);
template __global__ void small_matvec<double, 4>(const double *, const double *, double *, int);
