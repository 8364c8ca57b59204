// libFuzzer target: nsys SQLite import of arbitrary database images (deserialised read-only
// into memory). SQLite itself rejects corrupt pages; the target checks that our queries and
// row handling survive any schema and any values.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plansight/estimator/timeline_metrics.h"
#include "plansight/interop/nsys_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto r = plansight::interop::import_nsys_sqlite_bytes(bytes, {}, "fuzz");
  if (r.ok()) (void)plansight::estimator::rank_breakdown(r->timeline);
  return 0;
}
