// Warpline validation suite v3, family "image": image-processing kernels on row-major images.
//   conv2d_const : 2-D convolution of a float image with a (2 radius + 1)^2 filter held in constant
//                  memory, clamp-to-edge borders; the radius is a launch argument
//   sobel_u8     : Sobel gradient magnitude of an 8-bit image (border pixels set to 0)
//   hist256_u8   : 256-bin histogram of an 8-bit image: each block counts into shared memory (a
//                  grid-stride loop over uchar4 pixels), then adds its non-zero bins to the global
//                  histogram
//   histeq_apply : histogram equalisation: each block turns the cumulative histogram into a lookup
//                  table in shared memory (thread 0 first finds the smallest non-zero count with a
//                  serial loop), then maps the pixels (grid-stride over uchar4)
// Inputs: uniform random pixels; the filter and the cumulative histogram from the spec.

#define CONV_MAX_TAPS 289   // up to radius 8

__constant__ float c_filter[CONV_MAX_TAPS];

__global__ void conv2d_const(const float *__restrict__ in, float *__restrict__ out, int w, int h, int radius)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const int taps = 2 * radius + 1;
    float acc = 0.0f;
    for (int dy = -radius; dy <= radius; ++dy) {
        const int yy = min(max(y + dy, 0), h - 1);
        const float *row = in + (size_t)yy * w;
        const float *f = c_filter + (dy + radius) * taps + radius;
        for (int dx = -radius; dx <= radius; ++dx) {
            const int xx = min(max(x + dx, 0), w - 1);
            acc += f[dx] * row[xx];
        }
    }
    out[(size_t)y * w + x] = acc;
}

__global__ void sobel_u8(const unsigned char *__restrict__ in, unsigned char *__restrict__ out, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const size_t i = (size_t)y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = 0;
        return;
    }
    const unsigned char *p = in + i;
    const int nw = p[-w - 1], n = p[-w], ne = p[-w + 1];
    const int west = p[-1], east = p[1];
    const int sw = p[w - 1], s = p[w], se = p[w + 1];
    const int gx = (ne + 2 * east + se) - (nw + 2 * west + sw);
    const int gy = (sw + 2 * s + se) - (nw + 2 * n + ne);
    const float magnitude = sqrtf((float)(gx * gx + gy * gy));
    out[i] = (unsigned char)fminf(magnitude, 255.0f);
}

__global__ void hist256_u8(const unsigned char *__restrict__ img, unsigned int *__restrict__ hist, int npixels)
{
    __shared__ unsigned int bins[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        bins[i] = 0;
    __syncthreads();
    const uchar4 *quads = reinterpret_cast<const uchar4 *>(img);
    const int nquads = npixels / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nquads; i += gridDim.x * blockDim.x) {
        const uchar4 v = quads[i];
        atomicAdd(&bins[v.x], 1u);
        atomicAdd(&bins[v.y], 1u);
        atomicAdd(&bins[v.z], 1u);
        atomicAdd(&bins[v.w], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (bins[i])
            atomicAdd(&hist[i], bins[i]);
}

__global__ void histeq_apply(const unsigned char *__restrict__ in, unsigned char *__restrict__ out,
                             const unsigned int *__restrict__ cdf, int npixels)
{
    __shared__ unsigned char lut[256];
    __shared__ unsigned int cdf_min;
    if (threadIdx.x == 0) {
        unsigned int first = 0;
        for (int v = 0; v < 256; ++v) {
            if (cdf[v]) {
                first = cdf[v];
                break;
            }
        }
        cdf_min = first;
    }
    __syncthreads();
    const float scale = 255.0f / (float)(npixels - cdf_min);
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
        const float level = rintf((float)(cdf[v] - cdf_min) * scale);
        lut[v] = (unsigned char)fminf(fmaxf(level, 0.0f), 255.0f);
    }
    __syncthreads();
    const uchar4 *src = reinterpret_cast<const uchar4 *>(in);
    uchar4 *dst = reinterpret_cast<uchar4 *>(out);
    const int nquads = npixels / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nquads; i += gridDim.x * blockDim.x) {
        const uchar4 v = src[i];
        dst[i] = make_uchar4(lut[v.x], lut[v.y], lut[v.z], lut[v.w]);
    }
}
