// Plansight's own JSON for a Timeline (predicted, measured or imported): names interned once,
// spans as compact arrays. Perfetto/Chrome-trace export is app/interop's job; this format round
// trips every field.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"

namespace plansight::estimator {

// {"format": "plansight-timeline", "version": 1, "source", "title", "names": [...],
//  "tracks": [{"rank", "lane", "stream", "label",
//              "spans": [[start_ns, duration_ns, name, kind, phase, stage, micro_batch,
//                         flops, bytes, tensor_core], ...]}]}
nlohmann::json to_json(const Timeline& timeline);
Result<Timeline> timeline_from_json(const nlohmann::json& json);

}  // namespace plansight::estimator
