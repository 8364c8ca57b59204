// Plansight's own JSON for a Timeline (predicted, measured or imported): names interned once,
// spans as compact arrays. Perfetto/Chrome-trace export is app/interop's job; this format round
// trips every field.
#pragma once

#include <ostream>
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
// The same document, with `extra`'s members added (an object, such as {"plan": ...}; a member
// named as one of the timeline's is left out), written to `out` as compact JSON without building
// it: for a kept 160,000-op timeline the document was most of `plansight timeline --out`'s time
// and memory. Numbers read back exactly (integers as written, doubles in their shortest
// round-trip form; a non-finite double is null, as to_json() dumps it); invalid UTF-8 in names
// becomes U+FFFD, as dumping with nlohmann::json::error_handler_t::replace does.
void write_json(std::ostream& out, const Timeline& timeline, const nlohmann::json& extra = nlohmann::json::object());
Result<Timeline> timeline_from_json(const nlohmann::json& json);

}  // namespace plansight::estimator
