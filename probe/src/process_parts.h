// What a process of a run whose ranks are spread over processes (mpirun/srun) hands to the
// process that writes the result: for each of its ranks, the memory after the last step, the
// trained parameters (when collected) and the last step's spans on its steady clock, or the
// timeline its device measured (a GPU's CUPTI records, on the same clock). Encoded
// as CBOR (RFC 8949) with parameters as raw float bytes, so every value arrives bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "rank_worker.h"

namespace plansight::probe {

// This process's ranks `ranks` of `state` (their memory, parameters and, with a tracer, spans;
// `device_timeline` instead of the spans when the device measured one).
std::string encode_process_part(const RunState& state, const std::vector<int>& ranks,
                                const estimator::Timeline* device_timeline = nullptr);

// Adds one process's part to `state`: memory and parameters by rank, spans onto `state.tracer`
// (or its device timeline's tracks onto `device_timeline`) with the part's clock moved onto
// this process's by `clock_offset_ns` (subtracted).
Result<bool> merge_process_part(RunState& state, const std::string& part, std::int64_t clock_offset_ns,
                                estimator::Timeline* device_timeline = nullptr);

}  // namespace plansight::probe
