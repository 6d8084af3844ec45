// Warpline validation suite v3, family "kmeans": the two halves of a k-means iteration.
//   kmeans_assign_tex     : nearest centre of every point; features stored feature-major
//                           (features[f * npoints + p]) and read through a 1-D texture object inside
//                           the loop over clusters, centres in constant memory (cluster-major)
//   kmeans_assign_ldg     : the same with point-major features (features[p * nfeatures + f]) and the
//                           centres in global memory, both read through the read-only path (__ldg)
//   kmeans_centroid_accum : sums of the points of each cluster and the cluster sizes for the centre
//                           update: a grid-stride loop accumulates into per-block sums in shared memory
//                           (nclusters * (nfeatures + 1) words, dynamic), flushed with one global
//                           atomicAdd per entry and block
// Inputs: features uniform random in [0, 1); membership uniform random cluster indices.

#include <cfloat>

#define KMEANS_MAX_CENTRES 8192   // floats of constant memory for nclusters * nfeatures

__constant__ float c_centres[KMEANS_MAX_CENTRES];

__global__ void kmeans_assign_tex(cudaTextureObject_t features, int *__restrict__ membership, int npoints,
                                  int nclusters, int nfeatures)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npoints)
        return;
    int nearest = 0;
    float nearest_d = FLT_MAX;
    for (int c = 0; c < nclusters; ++c) {
        float d = 0.0f;
        for (int f = 0; f < nfeatures; ++f) {
            const float diff = tex1Dfetch<float>(features, f * npoints + p) - c_centres[c * nfeatures + f];
            d += diff * diff;
        }
        if (d < nearest_d) {
            nearest_d = d;
            nearest = c;
        }
    }
    membership[p] = nearest;
}

__global__ void kmeans_assign_ldg(const float *__restrict__ features, const float *__restrict__ centres,
                                  int *__restrict__ membership, int npoints, int nclusters, int nfeatures)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npoints)
        return;
    const float *x = features + (size_t)p * nfeatures;
    int nearest = 0;
    float nearest_d = FLT_MAX;
    for (int c = 0; c < nclusters; ++c) {
        const float *centre = centres + c * nfeatures;
        float d = 0.0f;
        for (int f = 0; f < nfeatures; ++f) {
            const float diff = __ldg(x + f) - __ldg(centre + f);
            d += diff * diff;
        }
        if (d < nearest_d) {
            nearest_d = d;
            nearest = c;
        }
    }
    membership[p] = nearest;
}

__global__ void kmeans_centroid_accum(const float *__restrict__ features, const int *__restrict__ membership,
                                      float *__restrict__ sums, int *__restrict__ counts, int npoints, int nclusters,
                                      int nfeatures)
{
    extern __shared__ float part[];
    int *part_count = (int *)(part + nclusters * nfeatures);
    for (int i = threadIdx.x; i < nclusters * nfeatures; i += blockDim.x)
        part[i] = 0.0f;
    for (int i = threadIdx.x; i < nclusters; i += blockDim.x)
        part_count[i] = 0;
    __syncthreads();
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < npoints; p += gridDim.x * blockDim.x) {
        const int c = membership[p];
        const float *x = features + (size_t)p * nfeatures;
        for (int f = 0; f < nfeatures; ++f)
            atomicAdd(&part[c * nfeatures + f], x[f]);
        atomicAdd(&part_count[c], 1);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < nclusters * nfeatures; i += blockDim.x)
        atomicAdd(&sums[i], part[i]);
    for (int i = threadIdx.x; i < nclusters; i += blockDim.x)
        atomicAdd(&counts[i], part_count[i]);
}
