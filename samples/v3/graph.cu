// Warpline validation suite v3, family "graph": graph traversal and sparse kernels.
//   bfs_level_expand : one level of a top-down breadth-first search on a CSR graph, one thread per
//                      vertex: the vertices on the frontier (level == cur) walk their edges and mark
//                      each neighbour not yet reached (level < 0) in next; the others skip them
//   pagerank_pull    : one pull-style PageRank iteration, one thread per vertex summing the
//                      contributions (rank / out-degree) of its in-neighbours (CSR of the transpose)
//   spmv_ell         : y = A x with A in ELLPACK format, column-major (entry k of row r at
//                      k * nrows + r), width entries per row; padding entries have a negative column
//                      index and are skipped
// Inputs: random CSR graphs (row lengths uniform in a range, random neighbours), levels uniform in
// [-1, 8), ELL columns uniform with a share of negative (padding) entries.

__global__ void bfs_level_expand(const int *__restrict__ rowptr, const int *__restrict__ col,
                                 const int *__restrict__ level, int *__restrict__ next, int nverts, int cur)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nverts || level[v] != cur)
        return;
    const int end = rowptr[v + 1];
    for (int e = rowptr[v]; e < end; ++e) {
        const int u = col[e];
        if (level[u] < 0)
            next[u] = 1;
    }
}

__global__ void pagerank_pull(const int *__restrict__ rowptr, const int *__restrict__ col,
                              const float *__restrict__ contrib, float *__restrict__ rank, int nverts, float damping)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nverts)
        return;
    float sum = 0.0f;
    const int end = rowptr[v + 1];
    for (int e = rowptr[v]; e < end; ++e)
        sum += contrib[col[e]];
    rank[v] = (1.0f - damping) / (float)nverts + damping * sum;
}

__global__ void spmv_ell(const int *__restrict__ cols, const float *__restrict__ vals, const float *__restrict__ x,
                         float *__restrict__ y, int nrows, int width)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows)
        return;
    float acc = 0.0f;
    for (int k = 0; k < width; ++k) {
        const size_t at = (size_t)k * nrows + r;
        const int c = cols[at];
        if (c >= 0)
            acc += vals[at] * x[c];
    }
    y[r] = acc;
}
