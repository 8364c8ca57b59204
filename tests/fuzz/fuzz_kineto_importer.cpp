// libFuzzer target: Kineto import of arbitrary bytes (JSON or gzip, decided by content). An
// accepted input is also analysed and exported, and the export must parse as JSON: a crash, a
// sanitizer report or an unparsable export is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/timeline_align.h"
#include "plansight/estimator/timeline_metrics.h"
#include "plansight/interop/kineto_importer.h"
#include "plansight/interop/perfetto_exporter.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto r = plansight::interop::import_kineto_bytes(bytes, {}, "fuzz");
  if (!r.ok()) return 0;
  auto& t = r->timeline;
  (void)plansight::estimator::hta_temporal_breakdown(t);
  (void)plansight::estimator::rank_breakdown(t);
  (void)plansight::estimator::pipeline_bubbles(t);
  const auto alignment = plansight::estimator::compute_alignment(t);
  plansight::estimator::apply_alignment(t, alignment);
  const std::string json = plansight::interop::chrome_trace_json({&t});
  if (!nlohmann::json::accept(json)) std::abort();
  return 0;
}
