// Warpline validation suite v2, family "triangular": triangular and data-dependent loops.
//   tri_matvec    : y = L x for a lower-triangular n x n matrix stored column-major; thread i
//                   runs i+1 iterations (coalesced column reads), so work grows along the grid
//   data_dep_loop : thread i runs min(counts[i], max_count) dependent FMA steps; the counts are
//                   random in [0, 64), so lanes of a warp diverge
//   collatz       : Collatz steps of a random start value, capped at max_steps (a while loop
//                   whose trip count only the data decides)
// Inputs: lcol / x / vals uniform random floats, counts / starts random ints.

__global__ void tri_matvec(const float *__restrict__ lcol, const float *__restrict__ x,
                           float *__restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int j = 0; j <= i; ++j)
        acc += lcol[(long long)j * n + i] * x[j];
    y[i] = acc;
}

__global__ void data_dep_loop(const int *__restrict__ counts, const float *__restrict__ vals,
                              float *__restrict__ out, int n, int max_count)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int steps = min(counts[i], max_count);
    float acc = vals[i];
    for (int t = 0; t < steps; ++t)
        acc = fmaf(acc, 0.9995f, 0.25f);
    out[i] = acc;
}

__global__ void collatz(const unsigned *__restrict__ starts, int *__restrict__ out, int n, int max_steps)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long v = starts[i];
    int steps = 0;
    while (v > 1ull && steps < max_steps) {
        v = (v & 1ull) ? 3ull * v + 1ull : v >> 1;
        ++steps;
    }
    out[i] = steps;
}
