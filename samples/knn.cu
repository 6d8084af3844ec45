// Warpline sample: nearest-neighbour distance kernel (Rodinia "nn" shape).
//
// Every thread computes the Euclidean distance between one record's
// (latitude, longitude) and the query point.  The grid may be 2-D when the
// record count exceeds the 1-D grid limit, so the linear block index is
// blockIdx.y * gridDim.x + blockIdx.x.
//
// Worked case: 42764 records, 256 threads per block -> 168 blocks.

struct GeoPoint {
    float lat;
    float lng;
};

__global__ void euclid(GeoPoint *d_locations, float *d_distances, int numRecords,
                       float lat, float lng)
{
    const int block_linear = blockIdx.y * gridDim.x + blockIdx.x;
    const int gid = blockDim.x * block_linear + threadIdx.x;
    if (gid < numRecords) {
        const GeoPoint *rec = d_locations + gid;
        const float dlat = lat - rec->lat;
        const float dlng = lng - rec->lng;
        d_distances[gid] = sqrtf(dlat * dlat + dlng * dlng);
    }
}
