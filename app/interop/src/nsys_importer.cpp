// nsys SQLite export to Timeline. Every query names its columns, chosen after PRAGMA table_info,
// so schema 2.x and 3.x exports (and tables a capture did not produce) go through one path.
// Rows are stepped one at a time into per-(device, lane, stream) tracks; device ids become ranks
// at the end, in ascending order.
#include "plansight/interop/nsys_importer.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "nsys_tables.h"
#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

using estimator::Lane;
using estimator::SpanKind;

// CUpti_ActivityMemcpyKind (cupti_activity.h) 0-10, and nsys's unified-memory kinds 11-13
// (ENUM_CUDA_MEMCPY_OPER); spelled like Kineto's memcpy names so HTA's ^Memcpy pattern applies.
std::string memcpy_name(std::int64_t kind) {
  static constexpr std::string_view names[] = {"Memcpy Unknown", "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA", "Memcpy AtoH",
                                               "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA", "Memcpy DtoD", "Memcpy HtoH",
                                               "Memcpy PtoP", "Memcpy HtoD (Unified)", "Memcpy DtoH (Unified)",
                                               "Memcpy DtoD (Unified)"};
  return std::string(kind >= 0 && kind < 14 ? names[kind] : names[0]);
}

// Serialized GlobalId (nsys docs, "SQLite Schema Reference"): pid in bits 24-47, tid in bits 0-23.
std::int64_t pid_of(std::int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
std::int64_t tid_of(std::int64_t global_id) { return global_id & 0xFFFFFF; }

class NsysReader {
 public:
  NsysReader(const detail::SqliteDb& db, const NsysImportOptions& options, std::string source)
      : db_(db), options_(options), classifier_(options.rules ? *options.rules : estimator::default_kernel_rules()),
        source_(std::move(source)) {}

  ImportedTrace run() {
    check_schema();
    read_session_start();
    read_gpu_names();
    read_kernels();
    read_copies("CUPTI_ACTIVITY_KIND_MEMCPY", SpanKind::memcpy);
    read_copies("CUPTI_ACTIVITY_KIND_MEMSET", SpanKind::memset);
    if (options_.include_nvtx) read_nvtx();
    return finish();
  }

 private:
  void check_schema() {
    const char* meta = db_.has_table("META_DATA_EXPORT") ? "META_DATA_EXPORT"
                       : db_.has_table("EXPORT_META_DATA") ? "EXPORT_META_DATA" : nullptr;
    if (meta) {
      detail::SqliteQuery q(db_, std::string("SELECT value FROM ") + meta + " WHERE name = 'EXPORT_SCHEMA_VERSION'");
      if (q.step()) schema_ = std::string(q.text(0));
      if (!schema_.empty() && !schema_.starts_with("2.") && !schema_.starts_with("3.")) {
        out_.warnings.push_back(make_warning(source_, "export schema " + schema_ + " is newer than the 2.x/3.x this reader knows; reading it anyway"));
      }
      return;
    }
    for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "NVTX_EVENTS", "StringIds"}) {
      if (db_.has_table(t)) {
        out_.warnings.push_back(make_warning(source_, "no META_DATA_EXPORT or EXPORT_META_DATA table; schema version unknown"));
        return;
      }
    }
    throw TraceError(0, "not an Nsight Systems SQLite export: none of META_DATA_EXPORT, EXPORT_META_DATA, "
                        "CUPTI_ACTIVITY_KIND_KERNEL, NVTX_EVENTS is present");
  }

  void read_session_start() {
    if (!db_.columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs")) {
      out_.warnings.push_back(make_warning(source_, "no TARGET_INFO_SESSION_START_TIME.utcEpochNs: times stay relative to the session start"));
      return;
    }
    detail::SqliteQuery q(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1");
    if (q.step() && !q.is_null(0)) {
      base_ns_ = q.int64(0);
      has_base_ = true;
    }
  }

  void read_gpu_names() {
    const auto cols = db_.columns("TARGET_INFO_GPU");
    if (!cols.count("id") || !cols.count("name")) return;
    detail::SqliteQuery q(db_, "SELECT id, name FROM TARGET_INFO_GPU");
    while (q.step()) gpu_names_[q.int64(0)] = std::string(q.text(1));
  }

  // "k.start, k.end, k.deviceId, k.streamId" when all exist, else empty (table skipped).
  std::string activity_columns(const std::set<std::string>& cols) const {
    for (const char* c : {"start", "end", "deviceId", "streamId"}) {
      if (!cols.count(c)) return {};
    }
    return "t.start, t.\"end\", t.deviceId, t.streamId";
  }

  std::string string_join(const std::string& id_expr) const {
    return has_strings_ ? "(SELECT value FROM StringIds WHERE id = " + id_expr + ")" : "NULL";
  }

  void read_kernels() {
    has_strings_ = db_.has_table("StringIds");
    const auto cols = db_.columns("CUPTI_ACTIVITY_KIND_KERNEL");
    const std::string base = activity_columns(cols);
    if (base.empty()) return;
    const char* name_col = options_.short_kernel_names && cols.count("shortName") ? "shortName"
                           : cols.count("demangledName")                         ? "demangledName"
                           : cols.count("shortName")                             ? "shortName" : nullptr;
    const std::string name = name_col ? string_join(std::string("t.") + name_col) : "NULL";
    const std::string pid = cols.count("globalPid") ? "t.globalPid" : "NULL";
    detail::SqliteQuery q(db_, "SELECT " + base + ", " + name + ", " + pid + " FROM CUPTI_ACTIVITY_KIND_KERNEL t");
    while (q.step()) {
      ++events_;
      const std::string kernel = q.is_null(4) ? "unnamed kernel" : std::string(q.text(4));
      const std::int32_t id = intern(kernel);
      const auto cls = class_of_name_[static_cast<std::size_t>(id)];
      const std::int64_t device = q.int64(2);
      if (!q.is_null(5)) ++device_of_pid_[pid_of(q.int64(5))][device];
      SpanKind kind = SpanKind::kernel;
      Lane lane = Lane::compute;
      if (cls == estimator::KernelClass::communication) {
        lane = Lane::communication;
        const auto ck = estimator::collective_kind_from_name(kernel);
        kind = ck == estimator::CollectiveKind::send ? SpanKind::send
               : ck == estimator::CollectiveKind::recv ? SpanKind::recv : SpanKind::collective;
        estimator::CollectiveCall call;
        call.rank = static_cast<std::int32_t>(device);  // device for now; ranks settled in finish()
        call.kind = ck;
        call.start_ns = q.int64(0);
        call.duration_ns = q.int64(1) - q.int64(0);
        call.name = kernel;
        out_.collectives.push_back(std::move(call));
      } else if (cls == estimator::KernelClass::memory) {
        lane = Lane::copy;
      }
      add(device, lane, q.int64(3), q.int64(0), q.int64(1), id, kind, 0,
          cls == estimator::KernelClass::tensor_core_gemm);
    }
  }

  void read_copies(const char* table, SpanKind kind) {
    const auto cols = db_.columns(table);
    const std::string base = activity_columns(cols);
    if (base.empty()) return;
    const std::string bytes = cols.count("bytes") ? "t.bytes" : "0";
    const std::string copy_kind = cols.count("copyKind") ? "t.copyKind" : "0";
    detail::SqliteQuery q(db_, "SELECT " + base + ", " + bytes + ", " + copy_kind + " FROM " + table + " t");
    while (q.step()) {
      ++events_;
      const std::int32_t id = intern(kind == SpanKind::memcpy ? memcpy_name(q.int64(5)) : std::string("Memset"));
      add(q.int64(2), Lane::copy, q.int64(3), q.int64(0), q.int64(1), id, kind, double(q.int64(4)), false);
    }
  }

  void read_nvtx() {
    const auto cols = db_.columns("NVTX_EVENTS");
    if (!cols.count("start") || !cols.count("end") || !cols.count("eventType")) return;
    const std::string text = cols.count("text") ? "t.text" : "NULL";
    const std::string text_id = cols.count("textId") && db_.has_table("StringIds") ? string_join("t.textId") : "NULL";
    const std::string tid = cols.count("globalTid") ? "t.globalTid" : "0";
    // ENUM_NSYS_EVENT_TYPE: 59 NvtxPushPopRange, 60 NvtxStartEndRange, 70/71 their Nvtxt forms.
    detail::SqliteQuery q(db_, "SELECT t.start, t.\"end\", " + text + ", " + text_id + ", " + tid +
                                   " FROM NVTX_EVENTS t WHERE t.\"end\" IS NOT NULL AND t.eventType IN (59, 60, 70, 71)");
    while (q.step()) {
      ++events_;
      std::string label = !q.is_null(2) ? std::string(q.text(2)) : !q.is_null(3) ? std::string(q.text(3)) : "NVTX range";
      const std::int64_t global_tid = q.int64(4);
      nvtx_.push_back({pid_of(global_tid), tid_of(global_tid), q.int64(0), q.int64(1), intern(label)});
    }
  }

  std::int32_t intern(const std::string& name) {
    auto [it, fresh] = name_ids_.try_emplace(name, static_cast<std::int32_t>(out_.timeline.names.size()));
    if (fresh) {
      out_.timeline.names.push_back(name);
      class_of_name_.push_back(classifier_.classify(name));
    }
    return it->second;
  }

  void add(std::int64_t device, Lane lane, std::int64_t stream, std::int64_t start, std::int64_t end, std::int32_t name_id,
           SpanKind kind, double bytes, bool tensor_core) {
    if (end < start) return;
    auto& track = tracks_[{device, static_cast<int>(lane), stream}];
    estimator::Span s;
    s.start_ns = start;
    s.duration_ns = end - start;
    s.name_id = name_id;
    s.kind = kind;
    s.bytes = bytes;
    s.tensor_core = tensor_core;
    track.push_back(s);
  }

  ImportedTrace finish();

  struct NvtxRange {
    std::int64_t pid, tid, start, end;
    std::int32_t name_id;
  };

  const detail::SqliteDb& db_;
  const NsysImportOptions& options_;
  estimator::KernelClassifier classifier_;
  std::string source_;
  ImportedTrace out_;
  std::string schema_;
  bool has_base_ = false, has_strings_ = false;
  std::int64_t base_ns_ = 0, events_ = 0;
  std::map<std::int64_t, std::string> gpu_names_;
  std::unordered_map<std::string, std::int32_t> name_ids_;
  std::vector<estimator::KernelClass> class_of_name_;
  std::map<std::tuple<std::int64_t, int, std::int64_t>, std::vector<estimator::Span>> tracks_;
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> device_of_pid_;  // pid -> device -> kernels
  std::vector<NvtxRange> nvtx_;
};

// Devices to ranks, NVTX ranges onto their process's rank, absolute time.
ImportedTrace NsysReader::finish() {
  std::map<std::int64_t, std::int32_t> rank_of_device;
  for (const auto& [key, spans] : tracks_) rank_of_device.emplace(std::get<0>(key), 0);
  std::int32_t next = 0;
  for (auto& [device, rank] : rank_of_device) rank = next++;
  const std::int64_t shift = has_base_ ? base_ns_ : 0;
  auto rank_of = [&](std::int64_t device) {
    auto it = rank_of_device.find(device);
    return it == rank_of_device.end() ? 0 : it->second;
  };
  for (auto& [key, spans] : tracks_) {
    const auto [device, lane, stream] = key;
    estimator::Track t;
    t.rank = rank_of(device);
    t.lane = static_cast<Lane>(lane);
    t.stream = static_cast<std::int32_t>(stream);
    t.label = "GPU " + std::to_string(device) + " stream " + std::to_string(stream);
    for (auto& s : spans) s.start_ns += shift;
    t.spans = std::move(spans);
    out_.timeline.tracks.push_back(std::move(t));
  }
  std::map<std::pair<std::int32_t, std::int64_t>, std::size_t> host_track;
  for (const auto& r : nvtx_) {
    if (r.end < r.start) continue;
    // The process's rank: the device that ran most of its kernels.
    std::int32_t rank = 0;
    if (auto it = device_of_pid_.find(r.pid); it != device_of_pid_.end()) {
      auto best = std::max_element(it->second.begin(), it->second.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
      rank = rank_of(best->first);
    }
    auto [it, fresh] = host_track.try_emplace({rank, r.tid}, out_.timeline.tracks.size());
    if (fresh) {
      estimator::Track t;
      t.rank = rank;
      t.lane = Lane::host;
      t.stream = static_cast<std::int32_t>(r.tid);
      t.label = "thread " + std::to_string(r.tid) + " NVTX";
      out_.timeline.tracks.push_back(std::move(t));
    }
    estimator::Span s;
    s.start_ns = r.start + shift;
    s.duration_ns = r.end - r.start;
    s.name_id = r.name_id;
    s.kind = SpanKind::annotation;
    out_.timeline.tracks[it->second].spans.push_back(s);
  }
  for (auto& c : out_.collectives) {
    c.rank = rank_of(c.rank);
    c.start_ns += shift;
  }
  out_.timeline.source = estimator::TimelineSource::imported;
  out_.timeline.sort_spans();
  std::stable_sort(out_.timeline.tracks.begin(), out_.timeline.tracks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rank, a.lane, a.stream) < std::tie(b.rank, b.lane, b.stream);
  });
  if (rank_of_device.empty()) rank_of_device.emplace(0, 0);
  for (const auto& [device, rank] : rank_of_device) {
    RankInfo info;
    info.rank = rank;
    info.source = source_;
    if (auto it = gpu_names_.find(device); it != gpu_names_.end()) info.device_name = it->second;
    info.time_base = has_base_ ? TimeBase::epoch : TimeBase::relative;
    info.base_time_ns = has_base_ ? base_ns_ : 0;
    info.events_read = events_;
    for (const auto& t : out_.timeline.tracks) {
      if (t.rank == rank) info.spans_kept += static_cast<std::int64_t>(t.spans.size());
    }
    out_.ranks.push_back(std::move(info));
  }
  return std::move(out_);
}

template <class Open>
Result<ImportedTrace> guarded(const std::string& source, const NsysImportOptions& options, Open&& open) {
  try {
    const detail::SqliteDb db = open();
    ImportedTrace trace = NsysReader(db, options, source).run();
    trace.timeline.title = source;
    return trace;
  } catch (const TraceError& e) {
    return make_error(source, e.what());
  } catch (const std::bad_alloc&) {
    return make_error(source, "out of memory while importing");
  }
}

}  // namespace

bool looks_like_sqlite(std::string_view head) { return head.starts_with(std::string_view("SQLite format 3\0", 16)); }

Result<ImportedTrace> import_nsys_sqlite(const std::filesystem::path& path, const NsysImportOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(path.string(), "no such file");
  return guarded(path.string(), options, [&] { return detail::SqliteDb::open_file(path.string()); });
}

Result<ImportedTrace> import_nsys_sqlite_bytes(std::string_view bytes, const NsysImportOptions& options,
                                               std::string_view source_name) {
  if (!looks_like_sqlite(bytes)) {
    return make_error(std::string(source_name), "not a SQLite database (the file does not start with \"SQLite format 3\")");
  }
  return guarded(std::string(source_name), options, [&] { return detail::SqliteDb::open_memory(bytes); });
}

}  // namespace plansight::interop
