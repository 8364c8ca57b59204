// Kineto import front: files, directories and tar archives to one Timeline. Each file is read completely
// before anything is returned, and any error discards everything, so a caller never sees a
// partial import. Ranks, base time and name tables are settled here, after the event loop.
#include "plansight/interop/kineto_importer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "kineto_reader.h"
#include "tar_reader.h"
#include "plansight/estimator/timeline_annotations.h"
#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

// Kineto before baseTimeNanoseconds wrote absolute epoch microseconds; a first timestamp after
// 2001-09-09 (1e18 ns) is read as such a clock, anything earlier as relative.
constexpr std::int64_t kEpochThresholdNs = 1'000'000'000'000'000'000;

bool is_trace_file(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

// Shifts spans and calls to absolute time and gives every track of the file its rank; a file
// without distributedInfo but with several GPUs is a single-process multi-GPU run, where each
// device is a rank.
void settle_file(detail::KinetoFile& f, std::int32_t rank, std::vector<RankInfo>& infos, std::vector<Diagnostic>& warnings) {
  const std::int64_t shift = f.has_base ? f.base_ns : 0;
  const bool device_ranks = !f.has_rank && f.devices.size() > 1;
  for (std::size_t i = 0; i < f.tracks.size(); ++i) {
    auto& t = f.tracks[i];
    const std::int32_t device = f.track_device[i];
    t.rank = device_ranks && device >= 0 ? device : rank;
    for (auto& s : t.spans) s.start_ns += shift;
  }
  for (std::size_t i = 0; i < f.collectives.size(); ++i) {
    auto& c = f.collectives[i];
    c.start_ns += shift;
    c.rank = device_ranks ? f.collective_device[i] : rank;
  }
  std::set<std::int32_t> ranks;
  for (const auto& t : f.tracks) ranks.insert(t.rank);
  if (ranks.empty()) ranks.insert(rank);
  for (std::int32_t r : ranks) {
    RankInfo info;
    info.rank = r;
    info.world_size = f.world_size;
    info.source = f.source;
    const std::int32_t device = device_ranks ? r : (f.devices.empty() ? -1 : f.devices.front());
    if (device >= 0 && static_cast<std::size_t>(device) < f.device_names.size()) info.device_name = f.device_names[static_cast<std::size_t>(device)];
    info.base_time_ns = f.has_base ? f.base_ns : 0;
    info.time_base = f.has_base || (f.any_ts && f.first_ts_ns >= kEpochThresholdNs) ? TimeBase::epoch : TimeBase::relative;
    info.fractional_timestamps = f.fractional;
    info.events_read = f.events;
    for (const auto& t : f.tracks) {
      if (t.rank == r) info.spans_kept += static_cast<std::int64_t>(t.spans.size());
    }
    infos.push_back(std::move(info));
  }
  if (device_ranks) {
    warnings.push_back(make_warning(f.source, "no distributedInfo and " + std::to_string(f.devices.size()) +
                                                  " GPUs: each GPU device taken as a rank"));
  }
  for (auto& w : f.warnings) warnings.push_back(std::move(w));
}

Result<ImportedTrace> assemble(std::vector<detail::KinetoFile> files, const KinetoImportOptions& options, std::string title) {
  ImportedTrace out;
  out.timeline.source = estimator::TimelineSource::imported;
  out.timeline.title = std::move(title);
  // Ranks: from distributedInfo; the rest get the lowest free numbers, in file-name order.
  std::map<std::int32_t, std::string> taken;
  for (const auto& f : files) {
    if (!f.has_rank) continue;
    auto [it, fresh] = taken.emplace(f.rank, f.source);
    if (!fresh) {
      return make_error(f.source, "distributedInfo.rank " + std::to_string(f.rank) + " is also the rank of " + it->second +
                                      "; a directory must hold one file per rank");
    }
  }
  std::int32_t next_free = 0;
  std::unordered_map<std::string, std::int32_t> name_ids;
  for (auto& f : files) {
    std::int32_t rank = f.rank;
    if (!f.has_rank) {
      while (taken.count(next_free)) ++next_free;
      rank = next_free;
      taken.emplace(rank, f.source);
      if (files.size() > 1) out.warnings.push_back(make_warning(f.source, "no distributedInfo.rank; taken as rank " + std::to_string(rank)));
    }
    for (std::size_t i = 0; i < f.tracks.size(); ++i) {
      if (f.track_device[i] >= 0 && std::find(f.devices.begin(), f.devices.end(), f.track_device[i]) == f.devices.end()) {
        f.devices.push_back(f.track_device[i]);
      }
    }
    std::sort(f.devices.begin(), f.devices.end());
    settle_file(f, rank, out.ranks, out.warnings);
    // Names: file-local ids to timeline ids. The first file's table is taken as is.
    std::vector<std::int32_t> remap(f.names.size());
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      auto [it, fresh] = name_ids.try_emplace(f.names[i], static_cast<std::int32_t>(out.timeline.names.size()));
      if (fresh) out.timeline.names.push_back(f.names[i]);
      remap[i] = it->second;
    }
    for (auto& t : f.tracks) {
      for (auto& s : t.spans) {
        if (s.name_id >= 0) s.name_id = remap[static_cast<std::size_t>(s.name_id)];
      }
      out.timeline.tracks.push_back(std::move(t));
    }
    for (auto& c : f.collectives) out.collectives.push_back(std::move(c));
    f = detail::KinetoFile{};  // free the file's tables before the next one grows
  }
  std::stable_sort(out.timeline.tracks.begin(), out.timeline.tracks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rank, a.lane, a.stream, a.label) < std::tie(b.rank, b.lane, b.stream, b.label);
  });
  out.timeline.sort_spans();
  if (options.propagate_annotation_tags) estimator::propagate_annotation_tags(out.timeline);
  std::sort(out.ranks.begin(), out.ranks.end(), [](const RankInfo& a, const RankInfo& b) { return a.rank < b.rank; });
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [](const auto& a, const auto& b) { return std::tie(a.rank, a.start_ns) < std::tie(b.rank, b.start_ns); });
  return out;
}

const estimator::KernelRules& rules_of(const KinetoImportOptions& options) {
  return options.rules ? *options.rules : estimator::default_kernel_rules();
}

template <class Read>
Result<ImportedTrace> guarded(const std::string& source, Read&& read) {
  try {
    return read();
  } catch (const TraceError& e) {
    return make_error(source, e.what());
  } catch (const std::bad_alloc&) {
    return make_error(source, "out of memory while importing");
  }
}

}  // namespace

Result<ImportedTrace> import_kineto_file(const std::filesystem::path& path, const KinetoImportOptions& options) {
  const std::string source = path.string();
  return guarded(source, [&]() -> Result<ImportedTrace> {
    const estimator::KernelClassifier classifier(rules_of(options));
    auto bytes = open_trace_source(path);
    std::vector<detail::KinetoFile> files;
    files.push_back(detail::read_kineto(*bytes, options, classifier, source));
    return assemble(std::move(files), options, path.filename().string());
  });
}

Result<ImportedTrace> import_kineto_bytes(std::string_view bytes, const KinetoImportOptions& options,
                                          std::string_view source_name) {
  const std::string source(source_name);
  return guarded(source, [&]() -> Result<ImportedTrace> {
    const estimator::KernelClassifier classifier(rules_of(options));
    auto in = make_trace_source(bytes);
    std::vector<detail::KinetoFile> files;
    files.push_back(detail::read_kineto(*in, options, classifier, source));
    return assemble(std::move(files), options, source);
  });
}

Result<ImportedTrace> import_kineto_directory(const std::filesystem::path& dir, const KinetoImportOptions& options) {
  std::error_code ec;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_trace_file(entry.path())) paths.push_back(entry.path());
  }
  if (ec) return make_error(dir.string(), "cannot list the directory: " + ec.message());
  if (paths.empty()) return make_error(dir.string(), "no *.json or *.json.gz trace files in the directory");
  std::sort(paths.begin(), paths.end());
  std::vector<detail::KinetoFile> files;
  const estimator::KernelClassifier classifier(rules_of(options));
  for (const auto& p : paths) {
    auto one = guarded(p.string(), [&]() -> Result<ImportedTrace> {
      auto bytes = open_trace_source(p);
      files.push_back(detail::read_kineto(*bytes, options, classifier, p.string()));
      return ImportedTrace{};
    });
    if (!one.ok()) return one.errors();
  }
  return assemble(std::move(files), options, dir.filename().string());
}

namespace {

// A member's bytes with its first two put back after peeking for the gzip magic.
class PeekedSource final : public ByteSource {
 public:
  explicit PeekedSource(ByteSource& in) : in_(in) {
    while (peeked_ < head_.size()) {
      const std::size_t r = in_.read(head_.data() + peeked_, head_.size() - peeked_);
      if (r == 0) break;
      peeked_ += r;
    }
  }
  bool gzip() const { return looks_like_gzip(std::string_view(head_.data(), peeked_)); }
  std::size_t read(char* out, std::size_t capacity) override {
    if (given_ < peeked_ && capacity > 0) {
      const std::size_t n = std::min(capacity, peeked_ - given_);
      std::copy_n(head_.data() + given_, n, out);
      given_ += n;
      return n;
    }
    return in_.read(out, capacity);
  }
  std::string_view kind() const override { return in_.kind(); }

 private:
  ByteSource& in_;
  std::array<char, 2> head_{};
  std::size_t peeked_ = 0, given_ = 0;
};

// Not an owner: lets make_gzip_source() read a source it does not own.
class BorrowedSource final : public ByteSource {
 public:
  explicit BorrowedSource(ByteSource& in) : in_(in) {}
  std::size_t read(char* out, std::size_t capacity) override { return in_.read(out, capacity); }
  std::string_view kind() const override { return in_.kind(); }

 private:
  ByteSource& in_;
};

}  // namespace

Result<ImportedTrace> import_kineto_archive(const std::filesystem::path& path, const KinetoImportOptions& options) {
  const std::string source = path.string();
  return guarded(source, [&]() -> Result<ImportedTrace> {
    const estimator::KernelClassifier classifier(rules_of(options));
    auto archive = open_trace_source(path);  // a .tar.gz inflates here
    std::vector<detail::KinetoFile> files;
    detail::for_each_tar_member(*archive, [&](const std::string& name, std::uint64_t, ByteSource& contents) {
      const std::filesystem::path member(name);
      // macOS tar stores resource forks as "._NAME" beside each file: not traces.
      if (!is_trace_file(member) || member.filename().string().starts_with("._")) return;
      const std::string where = source + ":" + name;
      try {
        PeekedSource peeked(contents);
        if (peeked.gzip()) {
          auto inflated = make_gzip_source(std::make_unique<BorrowedSource>(peeked));
          files.push_back(detail::read_kineto(*inflated, options, classifier, where));
        } else {
          files.push_back(detail::read_kineto(peeked, options, classifier, where));
        }
      } catch (const TraceError& e) {
        throw TraceError(e.offset(), name + ": " + e.what());  // the member, then what is wrong in it
      }
    });
    if (files.empty()) return make_error(source, "the archive holds no *.json or *.json.gz trace file");
    std::string stem = path.filename().string();
    for (const char* suffix : {".tar.gz", ".tgz", ".tar"}) {
      if (stem.size() > std::strlen(suffix) && stem.ends_with(suffix)) {
        stem.resize(stem.size() - std::strlen(suffix));
        break;
      }
    }
    return assemble(std::move(files), options, stem);
  });
}

Result<ImportedTrace> import_kineto(const std::filesystem::path& path, const KinetoImportOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return import_kineto_directory(path, options);
  return import_kineto_file(path, options);
}

}  // namespace plansight::interop
