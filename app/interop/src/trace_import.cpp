// Format detection by content and dispatch to the importers.
#include "plansight/interop/trace_import.h"

#include <fstream>

#include "plansight/interop/byte_source.h"
#include "plansight/interop/trace_error.h"
#include "tar_reader.h"

namespace plansight::interop {

namespace {

// `{"format": "plansight-timeline"` at the start (timeline_json.h writes that member first, and
// a document dumped with sorted keys has it first too), whitespace allowed between the tokens.
bool looks_like_plansight_timeline(std::string_view head) {
  std::size_t at = 0;
  const auto skip_space = [&] {
    while (at < head.size() && (head[at] == ' ' || head[at] == '\n' || head[at] == '\r' || head[at] == '\t')) ++at;
  };
  const auto take = [&](std::string_view token) {
    skip_space();
    if (head.substr(at, token.size()) != token) return false;
    at += token.size();
    return true;
  };
  return take("{") && take("\"format\"") && take(":") && take("\"plansight-timeline\"");
}

}  // namespace

std::string_view to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kineto_json: return "kineto_json";
    case TraceFormat::kineto_directory: return "kineto_directory";
    case TraceFormat::kineto_archive: return "kineto_archive";
    case TraceFormat::nsys_sqlite: return "nsys_sqlite";
    case TraceFormat::plansight_timeline: return "plansight_timeline";
    case TraceFormat::unknown: return "unknown";
  }
  return "?";
}

TraceFormat detect_trace_format(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return TraceFormat::kineto_directory;
  std::ifstream f(path, std::ios::binary);
  if (!f) return TraceFormat::unknown;
  std::string head(512, '\0');  // one tar block
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(f.gcount()));
  if (looks_like_sqlite(head)) return TraceFormat::nsys_sqlite;
  if (detail::looks_like_tar(head)) return TraceFormat::kineto_archive;
  if (looks_like_gzip(head)) {
    // JSON or a tar archive inside: the first inflated block says which.
    try {
      auto inflated = open_trace_source(path);
      std::string block(512, '\0');
      std::size_t got = 0;
      while (got < block.size()) {
        const std::size_t r = inflated->read(block.data() + got, block.size() - got);
        if (r == 0) break;
        got += r;
      }
      block.resize(got);
      return detail::looks_like_tar(block) ? TraceFormat::kineto_archive : TraceFormat::kineto_json;
    } catch (const TraceError&) {
      return TraceFormat::kineto_json;  // damaged gzip: the JSON importer names the offset
    }
  }
  for (char c : head) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{' && looks_like_plansight_timeline(head)) return TraceFormat::plansight_timeline;
    return c == '{' || c == '[' ? TraceFormat::kineto_json : TraceFormat::unknown;
  }
  return TraceFormat::unknown;
}

Result<ImportedTrace> import_trace(const std::filesystem::path& path, const TraceImportOptions& options) {
  switch (detect_trace_format(path)) {
    case TraceFormat::kineto_directory: return import_kineto_directory(path, options.kineto);
    case TraceFormat::nsys_sqlite: return import_nsys_sqlite(path, options.nsys);
    case TraceFormat::kineto_json: return import_kineto_file(path, options.kineto);
    case TraceFormat::kineto_archive: return import_kineto_archive(path, options.kineto);
    case TraceFormat::plansight_timeline:
      return make_error(path.string(), "a Plansight timeline (plansight timeline --out), not a trace of a run: import takes "
                                       "Kineto JSON (plain or gzip), a directory or tar archive of them, or an Nsight "
                                       "Systems SQLite export; for Perfetto, write the timeline with --format perfetto");
    case TraceFormat::unknown: break;
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return make_error(path.string(), "no such file or directory");
  return make_error(path.string(), "not a recognised trace: expected Kineto JSON (plain or gzip), a directory or a "
                                   "tar archive (.tar, .tar.gz) of them, or an Nsight Systems SQLite export");
}

}  // namespace plansight::interop
