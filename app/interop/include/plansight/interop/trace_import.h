// One entry point for `plansight import`: picks the importer from what the path is — a
// directory of Kineto files, an nsys SQLite export (by its file header), or a Kineto JSON file
// (plain or gzip) — never from the file name.
#pragma once

#include <filesystem>

#include "plansight/interop/imported_trace.h"
#include "plansight/interop/kineto_importer.h"
#include "plansight/interop/nsys_importer.h"

namespace plansight::interop {

// plansight_timeline: Plansight's own timeline JSON (`plansight timeline --out`), which is not a
// trace of a run: import_trace() says so and what to use instead.
enum class TraceFormat : std::uint8_t { kineto_json, kineto_directory, kineto_archive, nsys_sqlite, plansight_timeline, unknown };

std::string_view to_string(TraceFormat f);

// By content: directory; "SQLite format 3" header; gzip magic or a JSON opening brace/bracket
// (an object whose first member is "format": "plansight-timeline": Plansight's timeline).
TraceFormat detect_trace_format(const std::filesystem::path& path);

struct TraceImportOptions {
  KinetoImportOptions kineto;
  NsysImportOptions nsys;
};

Result<ImportedTrace> import_trace(const std::filesystem::path& path, const TraceImportOptions& options = {});

}  // namespace plansight::interop
