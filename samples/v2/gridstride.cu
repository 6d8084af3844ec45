// Warpline validation suite v2, family "gridstride": grid-stride loops
// (start = blockIdx.x*blockDim.x + threadIdx.x, step = gridDim.x*blockDim.x) with a grid sized
// to a few waves of the GPU rather than to the data.
//   gs_saxpy       : y = a*x + y over n floats
//   gs_copy_float4 : out = s*in over n4 float4 values (16-byte loads and stores)
// Inputs: x / in uniform random; y / out floats.

__global__ void gs_saxpy(const float *__restrict__ x, float *__restrict__ y, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void gs_copy_float4(const float4 *__restrict__ in, float4 *__restrict__ out, int n4, float s)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x *= s;
        v.y *= s;
        v.z *= s;
        v.w *= s;
        out[i] = v;
    }
}
