// Internal: reads one Kineto JSON stream into per-file tracks with file-local name ids. The
// importer front (kineto_importer.cpp) then assigns ranks, shifts to the base time and merges
// files. Split so that the event loop, the hot part, stays in one small file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/interop/byte_source.h"
#include "plansight/interop/imported_trace.h"
#include "plansight/interop/kineto_importer.h"

namespace plansight::interop::detail {

struct KinetoFile {
  std::string source;
  std::vector<std::string> names;
  std::vector<estimator::Track> tracks;  // rank 0 until assigned
  std::vector<std::int32_t> track_device;  // GPU device of each track, -1 for host tracks
  std::vector<estimator::CollectiveCall> collectives;  // rank 0 until assigned
  std::vector<std::int32_t> collective_device;          // GPU device of each collective
  std::vector<std::int32_t> devices;       // GPU devices seen, ascending
  std::vector<std::string> device_names;   // deviceProperties by id
  bool has_rank = false;
  std::int32_t rank = 0;
  std::int32_t world_size = 0;
  bool has_base = false;
  std::int64_t base_ns = 0;
  bool fractional = false;
  std::int64_t events = 0;
  std::int64_t first_ts_ns = 0;
  bool any_ts = false;
  std::vector<Diagnostic> warnings;
};

// Throws TraceError on malformed input.
KinetoFile read_kineto(ByteSource& source, const KinetoImportOptions& options,
                       const estimator::KernelClassifier& classifier, std::string source_name);

}  // namespace plansight::interop::detail
