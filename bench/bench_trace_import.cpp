// Kineto import throughput and memory on a generated trace. The generator writes a PyTorch-
// profiler-like mix (cpu_op with shapes, cuda_runtime, kernels with launch args, NCCL kernels
// with collective metadata, memcpy, flow events) with float-µs timestamps and a base time, so
// the parser sees the same token mix as on real traces. Run:
//   build/release/bench/plansight_bench_trace_import                       # 256 MiB, plain + gzip
//   build/release/bench/plansight_bench_trace_import --trace_mb=1024 --once  # the 1 GB target
// --once imports a single time without Google Benchmark and prints MB/s and the process's peak
// resident memory (getrusage ru_maxrss) against the file size. Targets (issue): >= 200 MB/s on
// one core, peak memory <= 1.5 x file size on a 1 GB trace.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>
#include <zlib.h>

#include "plansight/interop/kineto_importer.h"

namespace {

namespace fs = std::filesystem;

// Appends events until `target_bytes` are written; deterministic (no random numbers).
void generate_trace(const fs::path& path, std::uint64_t target_bytes, bool gzip) {
  std::string buf;
  buf.reserve(8 << 20);
  std::FILE* plain = gzip ? nullptr : std::fopen(path.c_str(), "wb");
  gzFile gz = gzip ? gzopen(path.c_str(), "wb6") : nullptr;
  std::uint64_t written = 0;
  auto flush = [&](bool force) {
    if (!force && buf.size() < (4 << 20)) return;
    if (plain) std::fwrite(buf.data(), 1, buf.size(), plain);
    if (gz) gzwrite(gz, buf.data(), static_cast<unsigned>(buf.size()));
    written += buf.size();
    buf.clear();
  };
  buf += R"EV({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045526528}],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}, "traceEvents": [
)EV";
  char line[1024];
  std::uint64_t i = 0;
  double ts = 4458676388068.751;
  while (written + buf.size() < target_bytes) {
    const double t = ts + double(i) * 3.217;
    const unsigned corr = static_cast<unsigned>(i);
    int n = 0;
    switch (i % 10) {
      case 0: case 1: case 2: case 3:
        n = std::snprintf(line, sizeof line,
                          R"EV(  {"ph": "X", "cat": "cpu_op", "name": "aten::linear_%u", "pid": 2910249, "tid": 2919752, "ts": %.3f, "dur": 12.431, "args": {"External id": %u, "Record function id": 0, "Sequence number": %u, "Fwd thread id": 1, "Input Dims": [[8, 4096, 4096], [4096, 4096], [4096]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"], "Ev Idx": %u}},
)EV", corr % 97, t, corr, corr, corr);
        break;
      case 4: case 5:
        n = std::snprintf(line, sizeof line,
                          R"EV(  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2910249, "tid": 2919752, "ts": %.3f, "dur": 4.112, "args": {"External id": %u, "cbid": 211, "correlation": %u}},
  {"ph": "s", "id": %u, "pid": 2910249, "tid": 2919752, "ts": %.3f, "cat": "ac2g", "name": "ac2g"},
)EV", t, corr, corr, corr, t);
        break;
      case 6: case 7:
        n = std::snprintf(line, sizeof line,
                          R"EV(  {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_%u", "pid": 0, "tid": 7, "ts": %.3f, "dur": 48.225, "args": {"External id": %u, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %u, "registers per thread": 168, "shared memory": 213248, "blocks per SM": 1.0, "warps per SM": 12.0, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %%": 19}},
)EV", corr % 13, t, corr, corr);
        break;
      case 8:
        n = std::snprintf(line, sizeof line,
                          R"EV(  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 40, "ts": %.3f, "dur": 130.5, "args": {"External id": %u, "queued": 0, "device": 0, "context": 1, "stream": 40, "correlation": %u, "registers per thread": 96, "shared memory": 87568, "grid": [8, 1, 1], "block": [544, 1, 1], "Collective name": "allreduce", "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 8, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}},
)EV", t, corr, corr);
        break;
      default:
        n = std::snprintf(line, sizeof line,
                          R"EV(  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": %.3f, "dur": 5.088, "args": {"External id": %u, "device": 0, "context": 1, "stream": 7, "correlation": %u, "bytes": 4000, "memory bandwidth (GB/s)": 0.7861635220125787}},
)EV", t, corr, corr);
        break;
    }
    buf.append(line, static_cast<std::size_t>(n));
    ++i;
    flush(false);
  }
  buf += R"EV(  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 4458676388068.751, "dur": 1.0}
  ], "traceName": "generated", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1711964646000000000}
)EV";
  flush(true);
  if (plain) std::fclose(plain);
  if (gz) gzclose(gz);
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;  // Linux reports KiB
}

std::uint64_t g_trace_mb = 256;

fs::path trace_path(bool gzip) {
  // Appended piecewise: GCC 12's -Wrestrict misfires on chained std::string operator+ (GCC PR 105651).
  std::string name = "plansight_bench_";
  name += std::to_string(g_trace_mb);
  name += gzip ? "mb.json.gz" : "mb.json";
  return fs::temp_directory_path() / name;
}

const fs::path& ensure_trace(bool gzip) {
  static fs::path paths[2];
  fs::path& p = paths[gzip ? 1 : 0];
  if (p.empty()) {
    p = trace_path(gzip);
    if (!fs::exists(p)) generate_trace(p, g_trace_mb << 20, gzip);
  }
  return p;
}

void BM_KinetoImport(benchmark::State& state, bool gzip) {
  const fs::path& path = ensure_trace(gzip);
  // Throughput is counted in uncompressed JSON bytes for both variants.
  const auto json_bytes = static_cast<std::int64_t>(fs::file_size(ensure_trace(false)));
  std::int64_t spans = 0;
  for (auto _ : state) {
    auto r = plansight::interop::import_kineto_file(path);
    if (!r.ok()) state.SkipWithError(r.error_text().c_str());
    else for (const auto& t : r->timeline.tracks) spans += static_cast<std::int64_t>(t.spans.size());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * json_bytes);
  state.counters["spans"] = double(spans) / double(std::max<std::int64_t>(1, state.iterations()));
  state.counters["peak_rss_MiB"] = peak_rss_bytes() / (1 << 20);
  state.counters["peak_rss_per_file_byte"] = peak_rss_bytes() / double(fs::file_size(path));
}
BENCHMARK_CAPTURE(BM_KinetoImport, plain, false)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_KinetoImport, gzip, true)->Unit(benchmark::kMillisecond)->UseRealTime();

int run_once() {
  const fs::path& path = ensure_trace(false);
  const double file_bytes = double(fs::file_size(path));
  const double rss_before = peak_rss_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = plansight::interop::import_kineto_file(path);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.error_text().c_str());
    return 1;
  }
  std::size_t spans = 0;
  for (const auto& t : r->timeline.tracks) spans += t.spans.size();
  const double peak = peak_rss_bytes();
  std::printf("file %s: %.1f MiB, %zu spans\n", path.c_str(), file_bytes / (1 << 20), spans);
  std::printf("import: %.2f s, %.1f MB/s (1 MB = 1e6 bytes)\n", secs, file_bytes / secs / 1e6);
  std::printf("peak RSS: %.1f MiB (before import %.1f MiB) = %.3f x file size\n", peak / (1 << 20),
              rss_before / (1 << 20), peak / file_bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool once = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--trace_mb=", 11) == 0) g_trace_mb = std::stoull(argv[i] + 11);
    else if (std::strcmp(argv[i], "--once") == 0) once = true;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  if (once) return run_once();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
