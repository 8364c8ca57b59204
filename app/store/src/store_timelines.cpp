// Timelines of a run: encoded outside the transaction (CPU work must not hold the write lock),
// stored with their counts and bounds so a run list can describe them without decoding.
#include <algorithm>
#include <limits>
#include <set>

#include "in_transaction.h"
#include "plansight/store/store.h"
#include "plansight/store/timeline_codec.h"
#include "sqlite_statement.h"

namespace plansight::store {
namespace {

using detail::Statement;
using estimator::TimelineSource;

TimelineInfo describe(std::int64_t run_id, const estimator::Timeline& t, std::size_t encoded_bytes) {
  TimelineInfo info;
  info.run_id = run_id;
  info.source = t.source;
  info.title = t.title;
  info.track_count = static_cast<std::int64_t>(t.tracks.size());
  info.encoded_bytes = static_cast<std::int64_t>(encoded_bytes);
  info.format_version = timeline_format_version_of(t);
  std::set<std::int32_t> ranks;
  std::int64_t begin = std::numeric_limits<std::int64_t>::max();
  std::int64_t end = std::numeric_limits<std::int64_t>::min();
  for (const auto& track : t.tracks) {
    ranks.insert(track.rank);
    info.span_count += static_cast<std::int64_t>(track.spans.size());
    for (const auto& s : track.spans) {
      std::int64_t span_end = 0;
      // Saturate: imported data may hold anything, and overflow must not become a wrong bound.
      if (__builtin_add_overflow(s.start_ns, s.duration_ns, &span_end)) {
        span_end = s.duration_ns > 0 ? std::numeric_limits<std::int64_t>::max()
                                     : std::numeric_limits<std::int64_t>::min();
      }
      begin = std::min(begin, s.start_ns);
      end = std::max(end, span_end);
    }
  }
  info.rank_count = static_cast<std::int64_t>(ranks.size());
  info.begin_ns = info.span_count ? begin : 0;
  info.end_ns = info.span_count ? end : 0;
  return info;
}

std::string timeline_name(std::int64_t run_id, TimelineSource source) {
  return "the " + std::string(estimator::to_string(source)) + " timeline of run " + std::to_string(run_id);
}

constexpr std::string_view kInfoColumns =
    "run_id, source, title, rank_count, track_count, span_count, begin_ns, end_ns, length(data), encoding";

Result<TimelineInfo> read_info(const Statement& row) {
  TimelineInfo info;
  info.run_id = row.int64(0);
  auto source = parse_timeline_source(row.text(1));
  if (!source) return source.errors();
  info.source = *source;
  info.title = row.text(2);
  info.rank_count = row.int64(3);
  info.track_count = row.int64(4);
  info.span_count = row.int64(5);
  info.begin_ns = row.int64(6);
  info.end_ns = row.int64(7);
  info.encoded_bytes = row.int64(8);
  info.format_version = static_cast<std::int32_t>(row.int64(9));
  return info;
}

}  // namespace

Result<TimelineInfo> Store::append_timeline(std::int64_t run_id, const estimator::Timeline& timeline) {
  auto encoded = encode_timeline(timeline);
  if (!encoded) return encoded.errors();
  const TimelineInfo info = describe(run_id, timeline, encoded->size());
  const std::string what = timeline_name(run_id, timeline.source);
  return detail::in_transaction(*this, [&]() -> Result<TimelineInfo> {
    if (auto st = require_run(run_id); !st) return st.errors();
    auto exists =
        Statement::prepare(db_.get(), path_, "SELECT 1 FROM timelines WHERE run_id = ? AND source = ?");
    if (!exists) return exists.errors();
    auto row =
        exists->bind(1, run_id).bind(2, estimator::to_string(timeline.source)).step("looking up " + what);
    if (!row) return row.errors();
    if (*row) {
      return make_error("timeline", "run " + std::to_string(run_id) + " already has a " +
                                        std::string(estimator::to_string(timeline.source)) +
                                        " timeline; a run holds one timeline per source");
    }
    auto insert = Statement::prepare(
        db_.get(), path_,
        "INSERT INTO timelines (run_id, source, title, rank_count, track_count, span_count, begin_ns, "
        "end_ns, encoding, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!insert) return insert.errors();
    insert->bind(1, run_id).bind(2, estimator::to_string(info.source)).bind(3, info.title);
    insert->bind(4, info.rank_count).bind(5, info.track_count).bind(6, info.span_count);
    insert->bind(7, info.begin_ns)
        .bind(8, info.end_ns)
        .bind(9, static_cast<std::int64_t>(info.format_version));
    insert->bind_blob(10, *encoded);
    if (auto st = insert->run("storing " + what); !st) return st.errors();
    return info;
  });
}

Result<estimator::Timeline> Store::load_timeline(std::int64_t run_id, TimelineSource source) {
  const std::string what = timeline_name(run_id, source);
  auto stmt =
      Statement::prepare(db_.get(), path_, "SELECT data FROM timelines WHERE run_id = ? AND source = ?");
  if (!stmt) return stmt.errors();
  auto row = stmt->bind(1, run_id).bind(2, estimator::to_string(source)).step("reading " + what);
  if (!row) return row.errors();
  if (!*row) {
    if (auto st = require_run(run_id); !st) return st.errors();
    return make_error("timeline", "run " + std::to_string(run_id) + " has no " +
                                      std::string(estimator::to_string(source)) + " timeline");
  }
  auto timeline = decode_timeline(stmt->blob(0));
  if (!timeline)
    return make_error("timeline", what + " in " + path_.string() + ": " + timeline.errors().front().message);
  return timeline;
}

Result<std::vector<TimelineInfo>> Store::list_timelines(std::int64_t run_id) {
  auto stmt = Statement::prepare(
      db_.get(), path_,
      "SELECT " + std::string(kInfoColumns) + " FROM timelines WHERE run_id = ? ORDER BY source");
  if (!stmt) return stmt.errors();
  stmt->bind(1, run_id);
  std::vector<TimelineInfo> out;
  for (;;) {
    auto row = stmt->step("listing the timelines of run " + std::to_string(run_id));
    if (!row) return row.errors();
    if (!*row) return out;
    auto info = read_info(*stmt);
    if (!info) return info.errors();
    out.push_back(std::move(*info));
  }
}

}  // namespace plansight::store
