// Import of PyTorch profiler / Kineto Chrome-trace JSON (plain or gzip) into a Timeline.
// One file is one rank (rank from "distributedInfo"); a directory holds one file per rank.
// Formats: current Kineto (kernel, gpu_memcpy, gpu_memset, gpu_user_annotation, cuda_runtime,
// cuda_driver, cpu_op, user_annotation) and the 2021 legacy one (Kernel, Memcpy, Memset, Runtime,
// Operator; lowercase "external id"). Time: baseTimeNanoseconds + ts when present (float µs with
// nanosecond fractions), else ts as absolute epoch µs. GPU events: pid = device, tid = stream
// (args "device"/"stream" win where present). NCCL kernels carry their collective from the
// kernel's args or, in older traces, from the record_param_comms op with the same External id.
#pragma once

#include <filesystem>
#include <string_view>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/interop/imported_trace.h"

namespace plansight::interop {

struct KinetoImportOptions {
  bool include_cpu_ops = true;      // cpu_op / Operator on host tracks, one per thread
  bool include_annotations = true;  // user_annotation, gpu_user_annotation
  bool include_runtime = false;     // cuda_runtime / cuda_driver / Runtime
  bool include_python = false;      // python_function (with_stack traces have millions)
  // Tags phase/stage/micro-batch of device work from enclosing GPU annotations.
  bool propagate_annotation_tags = true;
  const estimator::KernelRules* rules = nullptr;  // default_kernel_rules() when null
  // Holistic Trace Analysis's load-time filter (hta/common/trace.py,
  // _filter_irrelevant_gpu_kernels), applied per rank file: when the file has at least two
  // distinct "ProfilerStep#N" annotations, host events starting at or after the start of the
  // last step are dropped, and so is device work whose launch (the cuda_runtime event with the
  // same correlation id) started there or is missing. HTA does this by default before its
  // temporal breakdown and overlap, so importing with it set makes those figures HTA's.
  bool drop_last_profiler_step = false;
};

// A file: .json or .json.gz (gzip recognised by content). Errors carry the byte offset.
Result<ImportedTrace> import_kineto_file(const std::filesystem::path& path, const KinetoImportOptions& options = {});

// Every *.json / *.json.gz file of a directory (not recursive), one rank each. Ranks come from
// distributedInfo; files without one get the lowest free ranks in file-name order (warned).
Result<ImportedTrace> import_kineto_directory(const std::filesystem::path& dir, const KinetoImportOptions& options = {});

// The *.json / *.json.gz members of a tar archive (.tar, .tar.gz, .tgz: gzip recognised by
// content), one rank each as in a directory, in archive order, streamed member by member.
// Messages name the archive, then the member ("run.tar.gz: rank1.json: invalid JSON at byte 0").
Result<ImportedTrace> import_kineto_archive(const std::filesystem::path& path, const KinetoImportOptions& options = {});

// A file or a directory.
Result<ImportedTrace> import_kineto(const std::filesystem::path& path, const KinetoImportOptions& options = {});

// Bytes in memory (JSON or gzip), named `source_name` in messages; for tests and fuzzing.
Result<ImportedTrace> import_kineto_bytes(std::string_view bytes, const KinetoImportOptions& options = {},
                                          std::string_view source_name = "<memory>");

}  // namespace plansight::interop
