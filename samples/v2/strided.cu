// Warpline validation suite v2, family "strided": column-wise and strided reads with reuse.
//   col_sum        : one thread per column of a rows x cols row-major matrix; the warp reads
//                    consecutive columns of one row per step (coalesced), walking down the rows
//   row_sum        : one thread per row; a warp's 32 reads per step hit 32 different rows
//                    (stride cols floats), and each thread's next reads reuse its cached lines
//   strided_window : out[i] = sum over taps t of in[(i + t*stride) mod n]; every element is read
//                    by `taps` threads far apart, so reuse comes from L2
// Inputs: A / in uniform random floats, out floats.

__global__ void col_sum(const float *__restrict__ a, float *__restrict__ out, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols)
        return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r)
        acc += a[(long long)r * cols + c];
    out[c] = acc;
}

__global__ void row_sum(const float *__restrict__ a, float *__restrict__ out, int rows, int cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float *row = a + (long long)r * cols;
    float acc = 0.0f;
    for (int c = 0; c < cols; ++c)
        acc += row[c];
    out[r] = acc;
}

__global__ void strided_window(const float *__restrict__ in, float *__restrict__ out,
                               int n, int stride, int taps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int j = i;
    float acc = 0.0f;
    for (int t = 0; t < taps; ++t) {
        acc += in[j] * (1.0f + 0.125f * t);
        j += stride;
        if (j >= n)
            j -= n;
    }
    out[i] = acc;
}
