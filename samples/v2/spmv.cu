// Warpline validation suite v2, family "spmv": sparse matrix-vector product y = A x, A in CSR
// (rowptr: nrows+1 ints, col / val: nnz entries); 4 to 28 non-zeros per row at random columns.
//   spmv_csr_scalar : one thread per row (each lane walks its own row: divergent trip counts,
//                     uncoalesced col/val reads)
//   spmv_csr_vector : one warp per row; lanes stride the row by 32, shuffle-sum at the end
// Inputs: CSR arrays (random structure, fixed seed), x uniform random floats; y floats.

__global__ void spmv_csr_scalar(const int *__restrict__ rowptr, const int *__restrict__ col,
                                const float *__restrict__ val, const float *__restrict__ x,
                                float *__restrict__ y, int nrows)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows)
        return;
    float acc = 0.0f;
    const int end = rowptr[r + 1];
    for (int p = rowptr[r]; p < end; ++p)
        acc += val[p] * x[col[p]];
    y[r] = acc;
}

__global__ void spmv_csr_vector(const int *__restrict__ rowptr, const int *__restrict__ col,
                                const float *__restrict__ val, const float *__restrict__ x,
                                float *__restrict__ y, int nrows)
{
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (r >= nrows)
        return;
    float acc = 0.0f;
    const int end = rowptr[r + 1];
    for (int p = rowptr[r] + lane; p < end; p += 32)
        acc += val[p] * x[col[p]];
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0)
        y[r] = acc;
}
