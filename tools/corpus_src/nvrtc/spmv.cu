// Corpus (NVRTC): CSR sparse matrix-vector product, one warp per row.
extern "C" __global__ void spmv_csr_warp(const int *row_ptr, const int *cols, const float *vals,
                                        const float *x, float *y, int rows)
{
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= rows) return;
    float s = 0.f;
    for (int p = row_ptr[warp] + lane; p < row_ptr[warp + 1]; p += 32)
        s += vals[p] * __ldg(x + cols[p]);
    for (int off = 16; off; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) y[warp] = s;
}

extern "C" __global__ void spmv_csr_scalar(const int *row_ptr, const int *cols, const double *vals,
                                          const double *x, double *y, int rows)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double s = 0.0;
    for (int p = row_ptr[r]; p < row_ptr[r + 1]; ++p)
        s += vals[p] * x[cols[p]];
    y[r] = s;
}
