// Internal: the Kineto event reader's state (Event fields, track and name tables). Its JSON walking
// lives in kineto_reader.cpp, the event-to-span mapping in kineto_spans.cpp.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kineto_reader.h"
#include "plansight/interop/json_number.h"
#include "plansight/interop/json_scanner.h"

namespace plansight::interop::detail {

using estimator::KernelClass;
using estimator::Lane;
using estimator::SpanKind;

enum class Cat : std::uint8_t { other, kernel, memcpy, memset, gpu_annotation, cpu_op, user_annotation, runtime, python };

// Current names and the 2021 legacy capitalised ones (kineto tb_plugin samples).
inline Cat category(std::string_view c) {
  if (c == "kernel" || c == "Kernel") return Cat::kernel;
  if (c == "cpu_op" || c == "Operator") return Cat::cpu_op;
  if (c == "cuda_runtime" || c == "Runtime" || c == "cuda_driver") return Cat::runtime;
  if (c == "gpu_memcpy" || c == "Memcpy") return Cat::memcpy;
  if (c == "gpu_memset" || c == "Memset") return Cat::memset;
  if (c == "user_annotation") return Cat::user_annotation;
  if (c == "gpu_user_annotation") return Cat::gpu_annotation;
  if (c == "python_function") return Cat::python;
  return Cat::other;
}

struct CommArgs {
  std::string collective, dtype, process_group;
  std::int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  bool present = false;
};

struct Event {
  bool complete = false, metadata = false;
  Cat cat = Cat::other;
  std::string name, meta_name;
  std::int64_t pid = -1, tid = -1, device = -1, stream = -1, external_id = -1, bytes = -1, correlation = -1;
  bool has_ts = false, has_dur = false;
  std::int64_t ts_ns = 0, dur_ns = 0;
  CommArgs comm;
  void reset() {
    complete = metadata = has_ts = has_dur = false;
    cat = Cat::other;
    name.clear();
    meta_name.clear();
    pid = tid = device = stream = external_id = bytes = correlation = -1;
    comm.present = false;
    comm.in_nelems = comm.out_nelems = comm.group_size = -1;
  }
};

struct PendingComm {
  std::size_t call, track, span;
  std::int64_t external_id;
};

class Reader {
 // JSON walking: kineto_reader.cpp; span building: kineto_spans.cpp.
 public:
  Reader(ByteSource& source, const KinetoImportOptions& options, const estimator::KernelClassifier& classifier,
         KinetoFile& out)
      : scanner_(source), options_(options), classifier_(classifier), out_(out) {}

  void run();

 private:
  // An integer from a number or from the digits at the end of a string ("stream 7"); -1 if none.
  std::int64_t int_value();
  bool time_value(std::int64_t& ns);
  void string_value(std::string& out);
  void read_distributed_info();
  void read_device_properties();
  void read_events();
  void read_event();
  void read_args();

  std::int32_t intern(const std::string& name);
  std::size_t track_index(Lane lane, bool annotations, std::int64_t device, std::int64_t stream);
  void add_span(std::size_t track, std::int32_t name_id, SpanKind kind, double bytes, bool tensor_core);
  void finish_event();
  void add_kernel(std::int64_t device, std::int64_t stream);
  void fill_call(estimator::CollectiveCall& call, const CommArgs& comm, estimator::Span& span);
  void resolve_pending();
  // KinetoImportOptions::drop_last_profiler_step (kineto_last_step.cpp).
  void note_for_step_filter(std::size_t track, std::int64_t collective);
  void drop_last_profiler_step();

  JsonScanner scanner_;
  const KinetoImportOptions& options_;
  const estimator::KernelClassifier& classifier_;
  KinetoFile& out_;
  Event ev_;
  std::unordered_map<std::string, std::int32_t> name_ids_;
  std::vector<KernelClass> class_of_name_;
  std::map<std::tuple<int, bool, std::int64_t, std::int64_t>, std::size_t> tracks_;
  std::tuple<int, bool, std::int64_t, std::int64_t> last_key_;
  std::size_t last_index_ = 0;
  bool has_last_ = false;
  std::unordered_map<std::int64_t, CommArgs> comm_by_external_id_;
  std::vector<PendingComm> pending_;
  std::map<std::int64_t, std::string> thread_names_;
  // For drop_last_profiler_step: launches by correlation id, step annotations, device spans.
  struct DeviceSpanRef {
    std::size_t track, span;
    std::int64_t correlation, collective;  // collective: index into out_.collectives, or -1
  };
  std::unordered_map<std::int64_t, std::int64_t> launch_ns_;
  std::map<std::string, std::int64_t> step_start_ns_;  // "ProfilerStep#N" -> latest start
  std::vector<DeviceSpanRef> device_spans_;
};

}  // namespace plansight::interop::detail
