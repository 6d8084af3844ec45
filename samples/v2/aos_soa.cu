// Warpline validation suite v2, family "aos_soa": the same particle push in array-of-structs
// and struct-of-arrays layout. Each particle: position, velocity, mass, charge (8 floats);
// v += (q/m) E dt, x += v dt, in place.
//   aos_advance : one 32-byte struct per particle (4-byte aligned: eight scalar loads and stores
//                 per thread, each warp instruction touching a 1 KB span)
//   soa_advance : eight separate float arrays (every access coalesced)
// Inputs: particle fields uniform random in [0.5, 1.5).

struct Particle {
    float x, y, z, vx, vy, vz, m, q;
};

__global__ void aos_advance(Particle *__restrict__ p, int n, float dt, float ex, float ey, float ez)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Particle s = p[i];
    const float k = dt * s.q / s.m;
    s.vx += k * ex;
    s.vy += k * ey;
    s.vz += k * ez;
    s.x += dt * s.vx;
    s.y += dt * s.vy;
    s.z += dt * s.vz;
    p[i] = s;
}

__global__ void soa_advance(float *__restrict__ x, float *__restrict__ y, float *__restrict__ z,
                            float *__restrict__ vx, float *__restrict__ vy, float *__restrict__ vz,
                            const float *__restrict__ m, const float *__restrict__ q,
                            int n, float dt, float ex, float ey, float ez)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float k = dt * q[i] / m[i];
    const float nvx = vx[i] + k * ex;
    const float nvy = vy[i] + k * ey;
    const float nvz = vz[i] + k * ez;
    vx[i] = nvx;
    vy[i] = nvy;
    vz[i] = nvz;
    x[i] += dt * nvx;
    y[i] += dt * nvy;
    z[i] += dt * nvz;
}
