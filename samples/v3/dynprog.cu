// Warpline validation suite v3, family "dynprog": dynamic-programming recurrences whose cells depend
// on their neighbours, so that threads advance in wavefronts separated by barriers.
//   sw_batch_strip  : Smith-Waterman local alignment scores (linear gap) of a batch of sequence pairs,
//                     one block of T threads per pair. The query (rows) is cut into strips of T rows;
//                     thread t owns row t of the strip and works on column j = step - t, so one
//                     anti-diagonal of the strip advances per step, with one barrier per step. Values
//                     pass from thread t-1 to t through shared memory (double-buffered by step); the
//                     strip's last row is kept in shared memory for the next strip. Dynamic shared
//                     memory: 4 * (len + 1 + 2 T) + len bytes (rounded up to 16).
//   pathfinder_rows : minimum-cost path through a grid of weights, advanced `steps` rows per launch
//                     with a ghost zone: each block computes blockDim.x - 2 steps columns, its
//                     threads shrink the computed range by one on each side per row (barrier per row).
//                     Dynamic shared memory: 2 * blockDim.x ints.
//   viterbi_batch   : log-domain Viterbi decoding of a batch of observation sequences with one hidden
//                     Markov model, one block per sequence and one thread per state; each time step
//                     every state maximises over all predecessors (read from shared memory), writes its
//                     back-pointer, and the block synchronises. Dynamic shared memory: 2 * nstates floats.
// Inputs: sequences of 2-bit symbols (bytes 0..3), weights 0..9, observation symbols 0..nsym-1,
// log-probabilities uniform random in [-8, 0).

#include <climits>

__global__ void sw_batch_strip(const unsigned char *__restrict__ query, const unsigned char *__restrict__ target,
                               int *__restrict__ best, int len, int match, int mismatch, int gap)
{
    extern __shared__ int smem[];
    const int T = blockDim.x;
    const int t = threadIdx.x;
    int *last_row = smem;                      // H of the previous strip's last row, columns 0..len
    int *pass = smem + len + 1;                // [2][T]: thread t's value of the last two steps
    unsigned char *tgt = (unsigned char *)(pass + 2 * T);
    __shared__ int block_best;

    const unsigned char *q = query + (size_t)blockIdx.x * len;
    const unsigned char *s = target + (size_t)blockIdx.x * len;
    for (int j = t; j < len; j += T)
        tgt[j] = s[j];
    for (int j = t; j <= len; j += T)
        last_row[j] = 0;
    if (t == 0)
        block_best = 0;
    __syncthreads();

    int mine = 0;
    for (int strip = 0; strip < len; strip += T) {
        const unsigned char qc = q[strip + t];
        int left = 0;   // H[i][j-1]
        int diag = 0;   // H[i-1][j-1]
        for (int step = 0; step < len + T - 1; ++step) {
            const int j = step - t + 1;   // 1-based column of this thread at this step
            if (j >= 1 && j <= len) {
                const int up = (t == 0) ? last_row[j] : pass[((step - 1) & 1) * T + t - 1];
                const int sub = (qc == tgt[j - 1]) ? match : mismatch;
                int h = max(0, diag + sub);
                h = max(h, up - gap);
                h = max(h, left - gap);
                pass[(step & 1) * T + t] = h;
                if (t == T - 1)
                    last_row[j] = h;
                mine = max(mine, h);
                left = h;
                diag = up;
            }
            __syncthreads();
        }
    }
    atomicMax(&block_best, mine);
    __syncthreads();
    if (t == 0)
        best[blockIdx.x] = block_best;
}

__global__ void pathfinder_rows(const int *__restrict__ wall, const int *__restrict__ src, int *__restrict__ dst,
                                int cols, int start_row, int steps)
{
    extern __shared__ int rows[];
    int *prev = rows;
    int *next = rows + blockDim.x;
    const int tx = threadIdx.x;
    const int width = blockDim.x - 2 * steps;             // columns this block finishes
    const int x = blockIdx.x * width - steps + tx;        // this thread's column
    const bool valid = x >= 0 && x < cols;
    if (valid)
        prev[tx] = src[x];
    __syncthreads();
    bool computed = false;
    for (int s = 0; s < steps; ++s) {
        computed = false;
        if (valid && tx >= s + 1 && tx <= (int)blockDim.x - 2 - s) {
            const int left = (x > 0) ? prev[tx - 1] : INT_MAX;
            const int right = (x < cols - 1) ? prev[tx + 1] : INT_MAX;
            const int shortest = min(prev[tx], min(left, right));
            next[tx] = shortest + wall[(size_t)(start_row + s + 1) * cols + x];
            computed = true;
        }
        __syncthreads();
        if (computed)
            prev[tx] = next[tx];
        __syncthreads();
    }
    if (computed && tx >= steps && tx < (int)blockDim.x - steps)
        dst[x] = prev[tx];
}

__global__ void viterbi_batch(const float *__restrict__ log_trans, const float *__restrict__ log_emit,
                              const float *__restrict__ log_init, const int *__restrict__ obs,
                              unsigned short *__restrict__ backptr, float *__restrict__ best, int nstates, int nsym,
                              int steps)
{
    extern __shared__ float delta[];
    float *cur = delta;
    float *nxt = delta + nstates;
    const int j = threadIdx.x;
    const int *o = obs + (size_t)blockIdx.x * steps;
    cur[j] = log_init[j] + log_emit[j * nsym + o[0]];
    __syncthreads();
    for (int t = 1; t < steps; ++t) {
        float m = -INFINITY;
        int arg = 0;
        for (int i = 0; i < nstates; ++i) {
            const float v = cur[i] + log_trans[i * nstates + j];
            if (v > m) {
                m = v;
                arg = i;
            }
        }
        nxt[j] = m + log_emit[j * nsym + o[t]];
        backptr[((size_t)blockIdx.x * steps + t) * nstates + j] = (unsigned short)arg;
        __syncthreads();
        float *swap = cur;
        cur = nxt;
        nxt = swap;
    }
    if (j == 0) {
        float m = cur[0];
        for (int i = 1; i < nstates; ++i)
            m = fmaxf(m, cur[i]);
        best[blockIdx.x] = m;
    }
}
