// The Kineto JSON walk: one pass with the pull scanner; each event's fields are read into a
// reused Event (keys may come in any order) and handed to finish_event (kineto_spans.cpp).
#include "kineto_reader_impl.h"

namespace plansight::interop::detail {

// An integer from a number or from the digits at the end of a string ("stream 7"); -1 if none.
std::int64_t Reader::int_value() {
  std::int64_t v = -1;
  switch (scanner_.peek()) {
    case JsonScanner::Kind::number:
      if (!number_text_to_int64(scanner_.read_number(), v)) v = -1;
      return v;
    case JsonScanner::Kind::string: {
      const std::string_view s = scanner_.read_string();
      std::size_t i = s.size();
      while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
      if (i == s.size() || s.size() - i > 18) return -1;
      v = 0;
      for (; i < s.size(); ++i) v = v * 10 + (s[i] - '0');
      return v;
    }
    default: scanner_.skip_value(); return -1;
  }
}

std::int32_t Reader::intern(const std::string& name) {
  auto [it, fresh] = name_ids_.try_emplace(name, static_cast<std::int32_t>(out_.names.size()));
  if (fresh) {
    out_.names.push_back(name);
    class_of_name_.push_back(classifier_.classify(name));
  }
  return it->second;
}

void Reader::run() {
  if (scanner_.peek() == JsonScanner::Kind::array) {
    read_events();  // JSON Array Format of the trace-event spec: the events alone
  } else {
    scanner_.begin_object();
    std::string_view key;
    while (scanner_.next_key(key)) {
      if (key == "traceEvents") read_events();
      else if (key == "distributedInfo") read_distributed_info();
      else if (key == "deviceProperties") read_device_properties();
      else if (key == "baseTimeNanoseconds") out_.has_base = (out_.base_ns = int_value()) >= 0;
      else scanner_.skip_value();
    }
  }
  scanner_.finish();
  resolve_pending();
  if (options_.drop_last_profiler_step) drop_last_profiler_step();
  for (auto& t : out_.tracks) {
    if (out_.track_device[&t - out_.tracks.data()] >= 0) continue;
    // Kineto names threads "thread 2919752 (pt_main_thread)" itself; other producers give a bare name.
    auto it = thread_names_.find(t.stream);
    if (it == thread_names_.end()) continue;
    if (it->second.starts_with(t.label)) t.label = it->second;
    else t.label += " (" + it->second + ")";
  }
}

bool Reader::time_value(std::int64_t& ns) {
  if (scanner_.peek() != JsonScanner::Kind::number) {
    scanner_.skip_value();
    return false;
  }
  const std::string_view text = scanner_.read_number();
  if (!microseconds_text_to_ns(text, ns)) scanner_.fail("timestamp out of range: " + std::string(text));
  if (text.find('.') != std::string_view::npos) out_.fractional = true;
  return true;
}

void Reader::string_value(std::string& out) {
  if (scanner_.peek() == JsonScanner::Kind::string) out.assign(scanner_.read_string());
  else scanner_.skip_value();
}

void Reader::read_distributed_info() {
  if (scanner_.peek() != JsonScanner::Kind::object) return scanner_.skip_value();
  scanner_.begin_object();
  std::string_view key;
  while (scanner_.next_key(key)) {
    if (key == "rank") {
      const std::int64_t r = int_value();
      if (r >= 0 && r < (1 << 30)) out_.has_rank = true, out_.rank = static_cast<std::int32_t>(r);
    } else if (key == "world_size") {
      const std::int64_t w = int_value();
      if (w > 0 && w < (1 << 30)) out_.world_size = static_cast<std::int32_t>(w);
    } else {
      scanner_.skip_value();
    }
  }
}

void Reader::read_device_properties() {
  if (scanner_.peek() != JsonScanner::Kind::array) return scanner_.skip_value();
  scanner_.begin_array();
  while (scanner_.next_element()) {
    if (scanner_.peek() != JsonScanner::Kind::object) {
      scanner_.skip_value();
      continue;
    }
    std::int64_t id = -1;
    std::string name;
    scanner_.begin_object();
    std::string_view key;
    while (scanner_.next_key(key)) {
      if (key == "id") id = int_value();
      else if (key == "name") string_value(name);
      else scanner_.skip_value();
    }
    if (id >= 0 && id < 4096) {
      if (out_.device_names.size() <= static_cast<std::size_t>(id)) out_.device_names.resize(static_cast<std::size_t>(id) + 1);
      out_.device_names[static_cast<std::size_t>(id)] = name;
    }
  }
}

void Reader::read_events() {
  if (scanner_.peek() != JsonScanner::Kind::array) scanner_.fail("\"traceEvents\" must be an array");
  scanner_.begin_array();
  while (scanner_.next_element()) {
    if (scanner_.peek() != JsonScanner::Kind::object) {
      scanner_.skip_value();
      continue;
    }
    ev_.reset();
    read_event();
    finish_event();
  }
}

void Reader::read_event() {
  scanner_.begin_object();
  std::string_view key;
  while (scanner_.next_key(key)) {
    if (key == "ph") {
      if (scanner_.peek() != JsonScanner::Kind::string) {
        scanner_.skip_value();
        continue;
      }
      const std::string_view ph = scanner_.read_string();
      ev_.complete = ph == "X";
      ev_.metadata = ph == "M";
    } else if (key == "cat") {
      if (scanner_.peek() == JsonScanner::Kind::string) ev_.cat = category(scanner_.read_string());
      else scanner_.skip_value();
    } else if (key == "name") {
      string_value(ev_.name);
    } else if (key == "ts") {
      ev_.has_ts = time_value(ev_.ts_ns);
    } else if (key == "dur") {
      ev_.has_dur = time_value(ev_.dur_ns);
    } else if (key == "pid") {
      ev_.pid = int_value();
    } else if (key == "tid") {
      ev_.tid = int_value();
    } else if (key == "args") {
      read_args();
    } else {
      scanner_.skip_value();
    }
  }
}

void Reader::read_args() {
  if (scanner_.peek() != JsonScanner::Kind::object) return scanner_.skip_value();
  scanner_.begin_object();
  std::string_view key;
  while (scanner_.next_key(key)) {
    if (key == "stream") ev_.stream = int_value();
    else if (key == "device") ev_.device = int_value();
    else if (key == "External id" || key == "external id") ev_.external_id = int_value();
    else if (key == "bytes") ev_.bytes = int_value();
    else if (key == "correlation") ev_.correlation = int_value();
    else if (key == "Collective name") ev_.comm.present = true, string_value(ev_.comm.collective);
    else if (key == "In msg nelems") ev_.comm.in_nelems = int_value();
    else if (key == "Out msg nelems") ev_.comm.out_nelems = int_value();
    else if (key == "Group size") ev_.comm.group_size = int_value();
    else if (key == "dtype") string_value(ev_.comm.dtype);
    else if (key == "Process Group Name") string_value(ev_.comm.process_group);
    else if (key == "name" && ev_.metadata) string_value(ev_.meta_name);
    else scanner_.skip_value();
  }
}

std::size_t Reader::track_index(Lane lane, bool annotations, std::int64_t device, std::int64_t stream) {
  const auto key = std::make_tuple(static_cast<int>(lane), annotations, device, stream);
  if (has_last_ && key == last_key_) return last_index_;
  auto [it, fresh] = tracks_.try_emplace(key, out_.tracks.size());
  if (fresh) {
    estimator::Track t;
    t.lane = lane;
    t.stream = static_cast<std::int32_t>(stream);
    if (device >= 0) {
      t.label = "GPU " + std::to_string(device) + " stream " + std::to_string(stream);
      if (annotations) t.label += " annotations";
    } else {
      t.label = "thread " + std::to_string(stream);
    }
    out_.tracks.push_back(std::move(t));
    out_.track_device.push_back(static_cast<std::int32_t>(device));
  }
  has_last_ = true;
  last_key_ = key;
  last_index_ = it->second;
  return it->second;
}

void Reader::add_span(std::size_t track, std::int32_t name_id, SpanKind kind, double bytes, bool tensor_core) {
  estimator::Span s;
  s.start_ns = ev_.ts_ns;
  s.duration_ns = ev_.dur_ns;
  s.name_id = name_id;
  s.kind = kind;
  s.bytes = bytes;
  s.tensor_core = tensor_core;
  out_.tracks[track].spans.push_back(s);
  if (!out_.any_ts || ev_.ts_ns < out_.first_ts_ns) out_.first_ts_ns = ev_.ts_ns;
  out_.any_ts = true;
}

KinetoFile read_kineto(ByteSource& source, const KinetoImportOptions& options,
                       const estimator::KernelClassifier& classifier, std::string source_name) {
  KinetoFile out;
  out.source = std::move(source_name);
  Reader(source, options, classifier, out).run();
  return out;
}

}  // namespace plansight::interop::detail
