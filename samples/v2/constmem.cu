// Warpline validation suite v2, family "constmem": __constant__ tables.
//   const_poly         : Horner evaluation of a polynomial of degree `degree` whose coefficients
//                        sit in constant memory; every lane reads the same coefficient (broadcast)
//   const_table_lookup : each lane walks its own path through a 4096-entry constant table
//                        (k -> 5k+1 mod 4096), so a warp's constant reads diverge and serialise
// Inputs: in uniform random floats in [-1, 1], idx random ints; constant tables uniform random.

__constant__ float c_coef[64];
__constant__ float c_table[4096];

__global__ void const_poly(const float *__restrict__ in, float *__restrict__ out, int n, int degree)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float x = in[i];
    float acc = c_coef[degree];
    for (int k = degree - 1; k >= 0; --k)
        acc = acc * x + c_coef[k];
    out[i] = acc;
}

__global__ void const_table_lookup(const int *__restrict__ idx, float *__restrict__ out, int n, int rounds)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int k = idx[i] & 4095;
    float acc = 0.0f;
    for (int r = 0; r < rounds; ++r) {
        acc += c_table[k];
        k = (k * 5 + 1) & 4095;
    }
    out[i] = acc;
}
