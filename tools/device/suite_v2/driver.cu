// Validation suite v2 host driver: runs every launch of the manifest (gen_suite.py manifest) in a
// fixed order, family by family, from the suite's own sm_90 PTX (loaded with
// cudaLibraryLoadFromFile, so the driver JIT-compiles exactly the PTX Warpline analyses).
//
//   suite_v2 --manifest M --list launch_order.csv [--repeat R] [--families a,b] [--max-launches N]
//            [--root DIR] [--dry-run]
//
// For each family: load the PTX, allocate and fill the buffers on the host with fixed seeds
// (splitmix64), copy them to the device, create texture objects, fill __constant__ tables, then
// launch each [[launch]] `repeat` times back to back (each launch timed with CUDA events and
// checked for errors), and free everything. Writes nothing on stdout (ncu --csv prints its
// table there); on stderr "FAMILY_OK <name> <seconds>" after each family, and on a CUDA error
// "FAIL <key> <error>" before exiting with status 3 (the rows so far are in the CSV). --dry-run parses the manifest and builds the host data without touching
// the GPU. Build: nvcc -O2 -std=c++17 -arch=sm_90 -o suite_v2 driver.cu
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct BufSpec {
    std::string name, kind;
    long long count = 0;
    double lo = 0, hi = 1;
    uint64_t seed = 0;
};

struct CsrSpec {
    std::string name;
    long long nrows = 0, ncols = 0;
    int minnz = 0, maxnz = 0;
    uint64_t seed = 0;
};

struct TexSpec {
    std::string name, kind, buf;
    int width = 0, height = 0;
    double lo = 0, hi = 1;
    uint64_t seed = 0;
};

struct ConstSpec {
    std::string symbol;
    long long count = 0;
    double lo = 0, hi = 1;
    uint64_t seed = 0;
};

struct LaunchSpec {
    std::string key, kernel;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    size_t smem = 0;
    std::vector<std::string> params;
};

struct FamilySpec {
    std::string name, ptx;
    std::vector<BufSpec> buffers;
    std::vector<CsrSpec> csrs;
    std::vector<TexSpec> textures;
    std::vector<ConstSpec> consts;
    std::vector<LaunchSpec> launches;
};

[[noreturn]] void die(const std::string &msg)
{
    fprintf(stderr, "suite_v2: %s\n", msg.c_str());
    exit(2);
}

std::vector<FamilySpec> read_manifest(const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        die("cannot read manifest " + path);
    std::vector<FamilySpec> out;
    FamilySpec *cur = nullptr;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream ss(line);
        std::string word;
        ss >> word;
        auto bad = [&](const char *what) { die(path + ":" + std::to_string(lineno) + ": " + what); };
        if (word == "family") {
            out.emplace_back();
            cur = &out.back();
            ss >> cur->name >> cur->ptx;
        } else if (!cur) {
            bad("record outside a family");
        } else if (word == "buffer") {
            BufSpec b;
            ss >> b.name >> b.kind >> b.count >> b.lo >> b.hi >> b.seed;
            cur->buffers.push_back(b);
        } else if (word == "csr") {
            CsrSpec c;
            ss >> c.name >> c.nrows >> c.ncols >> c.minnz >> c.maxnz >> c.seed;
            cur->csrs.push_back(c);
        } else if (word == "tex1d") {
            TexSpec t;
            t.kind = "tex1d";
            ss >> t.name >> t.buf;
            cur->textures.push_back(t);
        } else if (word == "tex2d") {
            TexSpec t;
            t.kind = "tex2d";
            ss >> t.name >> t.width >> t.height >> t.lo >> t.hi >> t.seed;
            cur->textures.push_back(t);
        } else if (word == "const") {
            ConstSpec c;
            ss >> c.symbol >> c.count >> c.lo >> c.hi >> c.seed;
            cur->consts.push_back(c);
        } else if (word == "launch") {
            LaunchSpec l;
            int np = 0;
            ss >> l.key >> l.kernel >> l.grid[0] >> l.grid[1] >> l.grid[2] >> l.block[0] >> l.block[1] >>
                l.block[2] >> l.smem >> np;
            for (int i = 0; i < np; ++i) {
                std::string p;
                ss >> p;
                l.params.push_back(p);
            }
            if ((int)l.params.size() != np || l.params.back().empty())
                bad("launch: wrong parameter count");
            cur->launches.push_back(l);
        } else if (word == "end") {
            cur = nullptr;
        } else {
            bad("unknown record");
        }
        if (ss.fail())
            bad("malformed record");
    }
    return out;
}

// ------------------------------------------------------------------------- host data (fixed seeds)

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x2545F4914F6CDD1Dull + 1) {}
    uint64_t next()
    {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
};

size_t elem_size(const std::string &kind)
{
    if (kind == "f32u" || kind == "i32u" || kind == "i32sorted" || kind == "i32perm" || kind == "i32offsets" ||
        kind == "zero4")
        return 4;
    if (kind == "f64u" || kind == "zero8")
        return 8;
    if (kind == "f16u" || kind == "zero2")
        return 2;
    if (kind == "u8u" || kind == "zero1")
        return 1;
    die("unknown buffer kind " + kind);
}

// Host image of a buffer (empty for the zero kinds: the device copy is only memset).
std::vector<unsigned char> host_data(const BufSpec &b)
{
    std::vector<unsigned char> bytes;
    if (b.kind.rfind("zero", 0) == 0)
        return bytes;
    const size_t n = (size_t)b.count;
    bytes.resize(n * elem_size(b.kind));
    Rng rng(b.seed);
    const double span = b.hi - b.lo;
    if (b.kind == "f32u") {
        float *p = reinterpret_cast<float *>(bytes.data());
        for (size_t i = 0; i < n; ++i)
            p[i] = (float)(b.lo + span * rng.uniform());
    } else if (b.kind == "f64u") {
        double *p = reinterpret_cast<double *>(bytes.data());
        for (size_t i = 0; i < n; ++i)
            p[i] = b.lo + span * rng.uniform();
    } else if (b.kind == "f16u") {
        __half *p = reinterpret_cast<__half *>(bytes.data());
        for (size_t i = 0; i < n; ++i)
            p[i] = __float2half_rn((float)(b.lo + span * rng.uniform()));
    } else if (b.kind == "i32u") {
        int32_t *p = reinterpret_cast<int32_t *>(bytes.data());
        const uint64_t range = (uint64_t)(b.hi - b.lo);
        for (size_t i = 0; i < n; ++i)
            p[i] = (int32_t)((int64_t)b.lo + (int64_t)(rng.next() % range));
    } else if (b.kind == "u8u") {
        const uint64_t range = (uint64_t)(b.hi - b.lo);
        for (size_t i = 0; i < n; ++i)
            bytes[i] = (unsigned char)((int64_t)b.lo + (int64_t)(rng.next() % range));
    } else if (b.kind == "i32offsets") {
        // Segment starts: element 0 is 0, each next one adds a length uniform in [lo, hi]
        // (the same rule as the CSR row pointers of csr_data).
        int32_t *p = reinterpret_cast<int32_t *>(bytes.data());
        const uint64_t lengths = (uint64_t)(b.hi - b.lo) + 1;
        p[0] = 0;
        for (size_t i = 1; i < n; ++i)
            p[i] = p[i - 1] + (int32_t)b.lo + (int32_t)(rng.next() % lengths);
    } else if (b.kind == "i32sorted") {
        // Non-decreasing: random steps averaging (hi - lo) / count, clamped below hi.
        int32_t *p = reinterpret_cast<int32_t *>(bytes.data());
        const double mean_step = span / (double)n;
        double v = b.lo;
        const int64_t top = (int64_t)b.hi - 1;
        for (size_t i = 0; i < n; ++i) {
            p[i] = (int32_t)std::min<int64_t>((int64_t)v, top);
            v += 2.0 * mean_step * rng.uniform();
        }
    } else if (b.kind == "i32perm") {
        int32_t *p = reinterpret_cast<int32_t *>(bytes.data());
        for (size_t i = 0; i < n; ++i)
            p[i] = (int32_t)i;
        for (size_t i = n - 1; i > 0; --i)
            std::swap(p[i], p[rng.next() % (i + 1)]);
    } else {
        die("unknown buffer kind " + b.kind);
    }
    return bytes;
}

void csr_data(const CsrSpec &c, std::vector<int32_t> &rowptr, std::vector<int32_t> &col, std::vector<float> &val)
{
    Rng rng(c.seed);
    rowptr.assign((size_t)c.nrows + 1, 0);
    for (long long r = 0; r < c.nrows; ++r)
        rowptr[r + 1] = rowptr[r] + c.minnz + (int32_t)(rng.next() % (uint64_t)(c.maxnz - c.minnz + 1));
    const size_t nnz = (size_t)rowptr.back();
    col.resize(nnz);
    val.resize(nnz);
    for (size_t p = 0; p < nnz; ++p) {
        col[p] = (int32_t)(rng.next() % (uint64_t)c.ncols);
        val[p] = (float)(2.0 * rng.uniform() - 1.0);
    }
}

std::vector<float> uniform_floats(size_t n, double lo, double hi, uint64_t seed)
{
    std::vector<float> v(n);
    Rng rng(seed);
    for (size_t i = 0; i < n; ++i)
        v[i] = (float)(lo + (hi - lo) * rng.uniform());
    return v;
}

// ----------------------------------------------------------------------------------- the run

const size_t SLACK = 4096;  // zeroed bytes after every buffer

struct DeviceBuf {
    void *ptr = nullptr;
    size_t bytes = 0;
};

struct Row {
    long long order;
    std::string key, kernel;
    int repeat;
    std::string grid, block;
    size_t smem;
    int regs, static_smem, local_bytes, blocks_per_sm;
    double elapsed_us;
};

std::string dim_str(const unsigned d[3])
{
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

bool check(cudaError_t err, const std::string &what, const std::string &key)
{
    if (err == cudaSuccess)
        return true;
    fprintf(stderr, "FAIL %s %s: %s\n", key.c_str(), what.c_str(), cudaGetErrorString(err));
    fflush(stderr);
    return false;
}

std::set<std::string> split_csv(const std::string &s)
{
    std::set<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.insert(item);
    return out;
}

}  // namespace

int main(int argc, char **argv)
{
    std::string manifest, list_path, root = ".";
    std::set<std::string> only;
    int repeat = 1;
    long long max_launches = -1;
    bool dry = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                die("missing value after " + a);
            return argv[++i];
        };
        if (a == "--manifest")
            manifest = value();
        else if (a == "--list")
            list_path = value();
        else if (a == "--repeat")
            repeat = std::atoi(value().c_str());
        else if (a == "--families")
            only = split_csv(value());
        else if (a == "--max-launches")
            max_launches = std::atoll(value().c_str());
        else if (a == "--root")
            root = value();
        else if (a == "--dry-run")
            dry = true;
        else
            die("unknown option " + a);
    }
    if (manifest.empty())
        die("--manifest is required");
    std::vector<FamilySpec> families = read_manifest(manifest);
    for (const std::string &f : only) {
        bool found = false;
        for (const FamilySpec &fam : families)
            found = found || fam.name == f;
        if (!found)
            die("no family " + f + " in the manifest");
    }

    FILE *csv = nullptr;
    if (!list_path.empty()) {
        csv = fopen(list_path.c_str(), "w");
        if (!csv)
            die("cannot write " + list_path);
        fprintf(csv, "order,key,repeat,kernel,grid,block,smem_dynamic,regs_func_attr,static_smem_func_attr,"
                     "local_bytes_func_attr,blocks_per_sm_driver,elapsed_us\n");
        fflush(csv);
    }

    if (!dry) {
        cudaDeviceProp prop;
        if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties", "-"))
            return 3;
        fprintf(stderr, "device: %s, %d SMs, L2 %d B, smem/SM %zu B, smem/block opt-in %zu B, cc %d.%d\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize, prop.sharedMemPerMultiprocessor,
                prop.sharedMemPerBlockOptin, prop.major, prop.minor);
    }

    long long order = 0;
    long long launched = 0;
    for (const FamilySpec &fam : families) {
        if (!only.empty() && !only.count(fam.name))
            continue;
        if (max_launches >= 0 && launched >= max_launches)
            break;
        const auto t0 = std::chrono::steady_clock::now();
        std::map<std::string, DeviceBuf> bufs;
        std::map<std::string, cudaTextureObject_t> texs;
        std::vector<void *> extra_allocs;
        size_t total_bytes = 0;
        cudaLibrary_t lib = nullptr;
        const std::string fail_key = fam.name + "/-";

        if (!dry) {
            const std::string path = root + "/" + fam.ptx;
            if (!check(cudaLibraryLoadFromFile(&lib, path.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                       "cudaLibraryLoadFromFile " + path, fail_key))
                return 3;
        }
        auto upload = [&](const std::string &name, const void *host, size_t bytes) -> bool {
            DeviceBuf d;
            d.bytes = bytes;
            total_bytes += bytes;
            if (!dry) {
                if (!check(cudaMalloc(&d.ptr, bytes + SLACK), "cudaMalloc " + name, fail_key))
                    return false;
                if (!check(cudaMemset(d.ptr, 0, bytes + SLACK), "cudaMemset " + name, fail_key))
                    return false;
                if (host && !check(cudaMemcpy(d.ptr, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy " + name,
                                   fail_key))
                    return false;
            }
            bufs[name] = d;
            return true;
        };
        for (const BufSpec &b : fam.buffers) {
            std::vector<unsigned char> host = host_data(b);
            if (!upload(b.name, host.empty() ? nullptr : host.data(), (size_t)b.count * elem_size(b.kind)))
                return 3;
        }
        for (const CsrSpec &c : fam.csrs) {
            std::vector<int32_t> rowptr, col;
            std::vector<float> val;
            csr_data(c, rowptr, col, val);
            fprintf(stderr, "  csr %s: %lld rows, %zu non-zeros\n", c.name.c_str(), c.nrows, col.size());
            if (!upload(c.name + "_rowptr", rowptr.data(), rowptr.size() * 4) ||
                !upload(c.name + "_col", col.data(), col.size() * 4) ||
                !upload(c.name + "_val", val.data(), val.size() * 4))
                return 3;
        }
        for (const TexSpec &t : fam.textures) {
            cudaResourceDesc res;
            memset(&res, 0, sizeof res);
            cudaTextureDesc td;
            memset(&td, 0, sizeof td);
            td.readMode = cudaReadModeElementType;
            td.normalizedCoords = 0;
            td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
            if (t.kind == "tex1d") {
                auto it = bufs.find(t.buf);
                if (it == bufs.end())
                    die(fam.name + ": texture over unknown buffer " + t.buf);
                res.resType = cudaResourceTypeLinear;
                res.res.linear.devPtr = it->second.ptr;
                res.res.linear.desc = cudaCreateChannelDesc<float>();
                res.res.linear.sizeInBytes = it->second.bytes;
                td.filterMode = cudaFilterModePoint;
            } else {
                std::vector<float> host = uniform_floats((size_t)t.width * t.height, t.lo, t.hi, t.seed);
                total_bytes += host.size() * 4;
                void *ptr = nullptr;
                size_t pitch = 0;
                if (!dry) {
                    if (!check(cudaMallocPitch(&ptr, &pitch, (size_t)t.width * 4, t.height), "cudaMallocPitch",
                               fail_key) ||
                        !check(cudaMemcpy2D(ptr, pitch, host.data(), (size_t)t.width * 4, (size_t)t.width * 4,
                                            t.height, cudaMemcpyHostToDevice),
                               "cudaMemcpy2D", fail_key))
                        return 3;
                    extra_allocs.push_back(ptr);
                }
                res.resType = cudaResourceTypePitch2D;
                res.res.pitch2D.devPtr = ptr;
                res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
                res.res.pitch2D.width = t.width;
                res.res.pitch2D.height = t.height;
                res.res.pitch2D.pitchInBytes = pitch;
                td.filterMode = cudaFilterModeLinear;
            }
            cudaTextureObject_t tex = 0;
            if (!dry && !check(cudaCreateTextureObject(&tex, &res, &td, nullptr), "cudaCreateTextureObject " + t.name,
                               fail_key))
                return 3;
            texs[t.name] = tex;
        }
        for (const ConstSpec &c : fam.consts) {
            std::vector<float> host = uniform_floats((size_t)c.count, c.lo, c.hi, c.seed);
            if (!dry) {
                void *dptr = nullptr;
                size_t bytes = 0;
                if (!check(cudaLibraryGetGlobal(&dptr, &bytes, lib, c.symbol.c_str()),
                           "cudaLibraryGetGlobal " + c.symbol, fail_key))
                    return 3;
                if (bytes < host.size() * 4)
                    die(fam.name + ": constant " + c.symbol + " is smaller than the table");
                if (!check(cudaMemcpy(dptr, host.data(), host.size() * 4, cudaMemcpyHostToDevice),
                           "cudaMemcpy constant " + c.symbol, fail_key))
                    return 3;
            }
        }
        if (!dry && !check(cudaDeviceSynchronize(), "setup", fail_key))
            return 3;
        const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fprintf(stderr, "family %s: %zu launches, %.1f MB on the device, setup %.2f s\n", fam.name.c_str(),
                fam.launches.size(), total_bytes / 1e6, setup_s);

        cudaEvent_t ev0 = nullptr, ev1 = nullptr;
        if (!dry && (!check(cudaEventCreate(&ev0), "cudaEventCreate", fail_key) ||
                     !check(cudaEventCreate(&ev1), "cudaEventCreate", fail_key)))
            return 3;
        std::map<std::string, cudaKernel_t> kernels;
        for (const LaunchSpec &l : fam.launches) {
            if (max_launches >= 0 && launched >= max_launches)
                break;
            ++launched;
            // Marshal the parameters: 8-byte pointers / texture objects, 4- or 8-byte scalars.
            std::vector<std::vector<unsigned char>> storage;
            for (const std::string &p : l.params) {
                const size_t colon = p.find(':');
                const std::string kind = p.substr(0, colon), text = p.substr(colon + 1);
                std::vector<unsigned char> v;
                auto put = [&](const void *src, size_t n) {
                    v.assign((const unsigned char *)src, (const unsigned char *)src + n);
                };
                if (kind == "buf") {
                    auto it = bufs.find(text);
                    if (it == bufs.end())
                        die(l.key + ": unknown buffer " + text);
                    void *ptr = it->second.ptr;
                    put(&ptr, sizeof ptr);
                } else if (kind == "tex") {
                    auto it = texs.find(text);
                    if (it == texs.end())
                        die(l.key + ": unknown texture " + text);
                    unsigned long long t = it->second;
                    put(&t, sizeof t);
                } else if (kind == "u32" || kind == "s32" || kind == "b32") {
                    int32_t x = (int32_t)std::strtoll(text.c_str(), nullptr, 10);
                    put(&x, 4);
                } else if (kind == "u64" || kind == "s64" || kind == "b64") {
                    int64_t x = std::strtoll(text.c_str(), nullptr, 10);
                    put(&x, 8);
                } else if (kind == "f32") {
                    float x = std::strtof(text.c_str(), nullptr);
                    put(&x, 4);
                } else if (kind == "f64") {
                    double x = std::strtod(text.c_str(), nullptr);
                    put(&x, 8);
                } else {
                    die(l.key + ": unknown parameter kind " + kind);
                }
                storage.push_back(v);
            }
            std::vector<void *> args;
            for (auto &s : storage)
                args.push_back(s.data());
            const std::string grid = dim_str(l.grid), block = dim_str(l.block);
            if (dry) {
                for (int r = 0; r < repeat; ++r)
                    if (csv)
                        fprintf(csv, "%lld,%s,%d,%s,%s,%s,%zu,,,,,\n", order++, l.key.c_str(), r, l.kernel.c_str(),
                                grid.c_str(), block.c_str(), l.smem);
                continue;
            }
            cudaKernel_t k = nullptr;
            auto kit = kernels.find(l.kernel);
            if (kit == kernels.end()) {
                if (!check(cudaLibraryGetKernel(&k, lib, l.kernel.c_str()), "cudaLibraryGetKernel " + l.kernel, l.key))
                    return 3;
                kernels[l.kernel] = k;
            } else {
                k = kit->second;
            }
            const void *fn = (const void *)k;
            if (l.smem > 48 * 1024 &&
                !check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)l.smem),
                       "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", l.key))
                return 3;
            cudaFuncAttributes attr;
            memset(&attr, 0, sizeof attr);
            int regs = -1, static_smem = -1, local_bytes = -1, blocks = -1;
            if (cudaFuncGetAttributes(&attr, fn) == cudaSuccess) {
                regs = attr.numRegs;
                static_smem = (int)attr.sharedSizeBytes;
                local_bytes = (int)attr.localSizeBytes;
            }
            const int threads = (int)(l.block[0] * l.block[1] * l.block[2]);
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, threads, l.smem) != cudaSuccess)
                blocks = -1;
            cudaGetLastError();  // the two queries above are optional; clear what they left
            for (int r = 0; r < repeat; ++r) {
                cudaLaunchConfig_t cfg;
                memset(&cfg, 0, sizeof cfg);
                cfg.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
                cfg.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
                cfg.dynamicSmemBytes = l.smem;
                cfg.stream = 0;
                if (!check(cudaEventRecord(ev0), "cudaEventRecord", l.key) ||
                    !check(cudaLaunchKernelExC(&cfg, fn, args.data()), "launch", l.key) ||
                    !check(cudaEventRecord(ev1), "cudaEventRecord", l.key) ||
                    !check(cudaEventSynchronize(ev1), "execution", l.key)) {
                    if (csv)
                        fclose(csv);
                    return 3;
                }
                float ms = 0.0f;
                cudaEventElapsedTime(&ms, ev0, ev1);
                if (csv) {
                    fprintf(csv, "%lld,%s,%d,%s,%s,%s,%zu,%d,%d,%d,%d,%.2f\n", order, l.key.c_str(), r,
                            l.kernel.c_str(), grid.c_str(), block.c_str(), l.smem, regs, static_smem, local_bytes,
                            blocks, ms * 1000.0);
                    fflush(csv);
                }
                ++order;
                fprintf(stderr, "  %-52s r%d %10.1f us\n", l.key.c_str(), r, ms * 1000.0);
            }
        }
        if (!dry) {
            cudaEventDestroy(ev0);
            cudaEventDestroy(ev1);
            for (auto &t : texs)
                cudaDestroyTextureObject(t.second);
            for (auto &b : bufs)
                cudaFree(b.second.ptr);
            for (void *p : extra_allocs)
                cudaFree(p);
            cudaLibraryUnload(lib);
            if (!check(cudaDeviceSynchronize(), "teardown", fail_key))
                return 3;
        }
        const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        fprintf(stderr, "FAMILY_OK %s %.2f\n", fam.name.c_str(), total_s);
        fflush(stderr);
    }
    if (csv)
        fclose(csv);
    return 0;
}
