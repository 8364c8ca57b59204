// ChunkedSearch (see chunked_search.h): the chunking, and the merge that rebuilds what one
// search_layouts() call returns.
#include "plansight/gui/chunked_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

// layout_search.cpp's tie rule: throughputs within about 0.01% are one speed class.
std::int64_t speed_class(double seconds) { return std::llround(std::log(seconds) * 1e4); }

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d) {
    if (d * d > n) break;
    if (n % d == 0) out.push_back(d);
  }
  for (std::size_t i = out.size(); i-- > 0;) {
    if (out[i] * out[i] != n) out.push_back(n / out[i]);
  }
  return out;  // ascending
}

// A chunk with no search space left (fixed pp/dp lists that this tp cannot meet) is empty, not
// a failure of the whole search.
bool is_empty_space(const std::vector<Diagnostic>& errors) {
  return errors.size() == 1 && errors.front().field == "search";
}

}  // namespace

Result<ChunkedSearch> ChunkedSearch::plan(const est::Plan& base, const est::SearchOptions& options) {
  ChunkedSearch s;
  s.base_ = base;
  s.options_ = options;
  for (std::int64_t tp : divisors(std::max<std::int64_t>(base.cluster.gpus, 0))) {
    const auto& allowed = options.space.tp;
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), tp) != allowed.end()) s.tps_.push_back(tp);
  }
  if (s.tps_.empty()) {
    auto whole = est::search_layouts(base, options);  // nothing to chunk: let the search say why
    if (!whole) return whole.errors();
    return make_error("search.tp", "no tensor-parallel degree divides " + std::to_string(base.cluster.gpus) + " GPUs");
  }
  return s;
}

Result<bool> ChunkedSearch::run_chunk(std::size_t i) {
  if (i != done_ || i >= tps_.size()) return make_error("search", "chunks run once each, in order");
  est::SearchOptions chunk = options_;
  chunk.space.tp = {tps_[i]};
  // Keep every candidate the whole search could simulate: its top * simulate best by closed form.
  chunk.top = options_.top * std::max<std::size_t>(options_.simulate, 1);
  chunk.simulate = 1;
  auto result = est::search_layouts(base_, chunk);
  if (!result) {
    if (!is_empty_space(result.errors())) return result.errors();
    if (empty_error_.empty()) empty_error_ = result.errors();
    chunks_.emplace_back();
  } else {
    chunks_.push_back(std::move(*result));
  }
  ++done_;
  if (done_ == tps_.size() && !empty_error_.empty()) {
    const bool all_empty = std::all_of(chunks_.begin(), chunks_.end(), [](const est::SearchResult& r) { return r.enumerated == 0; });
    if (all_empty) return empty_error_;
  }
  return true;
}

Result<std::optional<est::SearchResult>> run_chunked_search(
    const est::Plan& base, const est::SearchOptions& options, const std::atomic<bool>& cancel,
    const std::function<void(std::size_t, std::size_t, std::int64_t)>& progress) {
  auto search = ChunkedSearch::plan(base, options);
  if (!search) return search.errors();
  const std::size_t n = search->chunk_count();
  for (std::size_t i = 0; i < n; ++i) {
    if (cancel.load()) return std::optional<est::SearchResult>();
    if (auto done = search->run_chunk(i); !done) return done.errors();
    if (progress) progress(i + 1, n, i + 1 < n ? search->chunk_tp(i + 1) : 0);
  }
  return std::optional<est::SearchResult>(search->result());
}

est::SearchResult ChunkedSearch::result() const {
  est::SearchResult out;
  out.threads = options_.threads;
  struct Kept {
    const est::RankedLayout* layout;
    std::size_t chunk, position;
  };
  std::vector<Kept> kept;
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    const est::SearchResult& r = chunks_[c];
    est::add_search_counts(out, r);
    out.seconds += r.seconds;
    for (std::size_t p = 0; p < r.layouts.size(); ++p) kept.push_back({&r.layouts[p], c, p});
  }

  // The whole search's selection: the best top * simulate by closed form, faster first; ties by
  // memory, exact time, then enumeration order (chunk, then the chunk's own order).
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) {
    const double ta = a.layout->closed_form_iteration_s, tb = b.layout->closed_form_iteration_s;
    if (speed_class(ta) != speed_class(tb)) return speed_class(ta) < speed_class(tb);
    const double ma = a.layout->estimate.memory.peak.total_bytes(), mb = b.layout->estimate.memory.peak.total_bytes();
    if (ma != mb) return ma < mb;
    if (ta != tb) return ta < tb;
    return a.chunk != b.chunk ? a.chunk < b.chunk : a.position < b.position;
  });
  const std::size_t keep = options_.top * std::max<std::size_t>(options_.simulate, 1);
  if (kept.size() > keep) kept.resize(keep);
  for (const Kept& k : kept) out.layouts.push_back(*k.layout);
  // search_layouts()'s final order, stable over the closed-form order.
  std::stable_sort(out.layouts.begin(), out.layouts.end(), est::ranks_before);
  if (out.layouts.size() > options_.top) out.layouts.resize(options_.top);
  return out;
}

}  // namespace plansight::gui
