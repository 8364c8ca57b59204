// Import of an Nsight Systems SQLite export (`nsys export --type sqlite`) into a Timeline.
// Schema 3.x (META_DATA_EXPORT, ENUM_* tables, greenContextId) and 2.x (EXPORT_META_DATA) are
// both read, by column names looked up at run time rather than fixed positions. Tables used:
// CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, NVTX_EVENTS, StringIds,
// TARGET_INFO_SESSION_START_TIME, TARGET_INFO_GPU; a table that is absent is simply empty.
// Times are integer ns from session start; with TARGET_INFO_SESSION_START_TIME they become
// absolute (utcEpochNs + t). One rank per GPU device, ascending device id.
#pragma once

#include <filesystem>
#include <string_view>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/interop/imported_trace.h"

namespace plansight::interop {

struct NsysImportOptions {
  bool include_nvtx = true;      // NVTX push/pop and start/end ranges as host annotations
  bool short_kernel_names = false;  // shortName instead of demangledName
  const estimator::KernelRules* rules = nullptr;  // default_kernel_rules() when null
};

Result<ImportedTrace> import_nsys_sqlite(const std::filesystem::path& path, const NsysImportOptions& options = {});

// The database file's bytes in memory (SQLite's deserialize); for tests and fuzzing.
Result<ImportedTrace> import_nsys_sqlite_bytes(std::string_view bytes, const NsysImportOptions& options = {},
                                               std::string_view source_name = "<memory>");

// True when `head` starts with the SQLite 3 file header ("SQLite format 3\0").
bool looks_like_sqlite(std::string_view head);

}  // namespace plansight::interop
