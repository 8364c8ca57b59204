// ChunkedSearch: estimator::search_layouts() run one tensor-parallel degree at a time, so that
// the Search page can report progress between chunks and stop at a chunk boundary when
// cancelled (search_layouts() itself has no progress or cancel hook).
//
// Why the merged result equals one search_layouts() call: the search enumerates tp outermost,
// so chunks in ascending tp preserve its enumeration order; counts add up; a rejection's first
// example is the earliest chunk's and the closest memory miss the smallest over chunks. Each
// chunk keeps its top * simulate best by closed form (the global best are among them) and
// re-ranks them with estimate(); the merge selects the global top * simulate by the closed-form
// order (speed class, memory, time; the estimate's peak memory standing for the lean one) and
// ranks those by the same final order as search_layouts(). Only candidates tied in speed class
// and memory to the last bit may come out in another order. The chunks' extra simulations cost
// about one estimate() per kept candidate per chunk.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "plansight/estimator/layout_search.h"

namespace plansight::gui {

class ChunkedSearch {
 public:
  // The chunks of the search of `base` (one per allowed tp); errors as search_layouts() gives them.
  static Result<ChunkedSearch> plan(const estimator::Plan& base, const estimator::SearchOptions& options = {});

  std::size_t chunk_count() const { return tps_.size(); }
  std::int64_t chunk_tp(std::size_t i) const { return tps_[i]; }
  // Searches chunk i (in order; each once). A chunk's error is the search's error; when the
  // last chunk finds that no chunk had anything to search, that is the error.
  Result<bool> run_chunk(std::size_t i);
  std::size_t chunks_done() const { return done_; }
  // The merged result of the chunks run so far (all of them for the whole search).
  estimator::SearchResult result() const;

 private:
  estimator::Plan base_;
  estimator::SearchOptions options_;
  std::vector<std::int64_t> tps_;
  std::vector<estimator::SearchResult> chunks_;
  std::vector<Diagnostic> empty_error_;  // the first chunk's "nothing to search"
  std::size_t done_ = 0;
};

// The whole search, chunk by chunk: `progress(done, total, next_tp)` after each chunk (next_tp 0
// after the last), and a stop before the next chunk once `cancel` is set. nullopt: cancelled.
Result<std::optional<estimator::SearchResult>> run_chunked_search(
    const estimator::Plan& base, const estimator::SearchOptions& options, const std::atomic<bool>& cancel,
    const std::function<void(std::size_t done, std::size_t total, std::int64_t next_tp)>& progress);

}  // namespace plansight::gui
