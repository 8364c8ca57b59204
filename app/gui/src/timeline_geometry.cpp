// Visible-range walk, sub-pixel folding and per-colour batching (see timeline_geometry.h).
#include "plansight/gui/timeline_geometry.h"

#include <algorithm>

namespace plansight::gui {

namespace est = plansight::estimator;

void TimelineGeometry::clear() {
  for (auto& f : fills) f.clear();
  bubbles.clear();
  labels.clear();
  spans_visited = 0;
}

std::size_t TimelineGeometry::rect_count() const {
  std::size_t n = bubbles.size();
  for (const auto& f : fills) n += f.size();
  return n;
}

namespace {

// An open run of narrow spans in one row: extended while its neighbours are narrow and touch it.
struct Run {
  bool active = false;
  SpanStyle style = SpanStyle::other;
  double x0 = 0, x1 = 0;
  double dominant_px = -1;  // width of the widest member, whose style the run takes
};

// Up to this many spans inside one fold cell are walked one by one (exact colour choice);
// longer stretches are jumped over by binary search.
constexpr std::size_t kWalkLimit = 16;

// First position in [first, last) whose key is > value, galloping outward from `first`:
// O(log distance) probes that stay in cache when the answer is near, as the next fold cell's
// usually is; a plain binary search over the whole track would miss cache at every step.
template <class It, class Key>
It gallop_upper_bound(It first, It last, std::int64_t value, Key key) {
  std::ptrdiff_t step = 1;
  It lo = first;
  while (step < last - lo && key(*(lo + step)) <= value) {
    lo += step;
    step *= 2;
  }
  const It hi = step < last - lo ? lo + step + 1 : last;
  return std::upper_bound(lo, hi, value, [&](std::int64_t v, const auto& e) { return v < key(e); });
}

}  // namespace

void build_geometry(const TimelineIndex& index, const TimeAxis& axis, const std::vector<TimelineRow>& rows,
                    const GeometryOptions& options, TimelineGeometry& out) {
  out.clear();
  const double px = 1.0 / std::max(options.device_pixel_ratio, 0.25);  // one device pixel
  const double fold = options.fold_device_px * px;
  const double width = axis.width_px;
  const double ox = options.x_offset;
  // The axis maps inlined: no call and no division per span in the loops below.
  const double px_per_ns = width / static_cast<double>(axis.span_ns());
  const double ns_per_px = 1.0 / px_per_ns;
  const auto x_of = [&](std::int64_t t) { return static_cast<double>(t - axis.begin_ns) * px_per_ns; };
  const auto ns_at = [&](double x) { return axis.begin_ns + static_cast<std::int64_t>(x * ns_per_px); };

  for (const TimelineRow& row : rows) {
    const auto& spans = index.track(row.track).spans;
    const double y = row.y + options.inset_px;
    const double h = std::max(row.height - 2 * options.inset_px, px);

    auto [first, last] = index.visible(row.track, axis.begin_ns, axis.end_ns);
    if (options.reveal) last = std::min(last, (*options.reveal)[row.track]);
    first = std::min(first, last);
    const auto& max_end = index.track_index(row.track).max_end_ns;

    Run run;
    const auto flush = [&] {
      if (!run.active) return;
      const double w = std::max(run.x1 - run.x0, px);
      auto& batch = out.fills[static_cast<std::size_t>(run.style)];
      // A run touching the previous run of the same colour in this row extends it: identical
      // pixels, fewer rectangles (a zoomed-out communication lane becomes a few long bars).
      if (!batch.empty() && batch.back().top() == y && batch.back().right() >= ox + run.x0 - 0.5 * px &&
          batch.back().left() <= ox + run.x0) {
        batch.back().setRight(std::max(batch.back().right(), ox + run.x0 + w));
      } else {
        batch.emplace_back(ox + run.x0, y, w, h);
      }
      run.active = false;
    };
    std::size_t i = first;
    while (i < last) {
      const est::Span& s = spans[i];
      ++out.spans_visited;
      double x1 = x_of(s.end_ns());
      if (x1 < 0) {  // overlapped by a longer earlier span; ends before the view
        ++i;
        continue;
      }
      double x0 = std::max(x_of(s.start_ns), -px);
      x1 = std::min(x1, width + px);
      const double w = x1 - x0;
      const SpanStyle style = style_of(s);
      ++i;
      if (w >= fold) {
        // Wide: its own rectangle, one device pixel short on the right so neighbours stay apart.
        flush();
        out.fills[static_cast<std::size_t>(style)].emplace_back(ox + x0, y, std::max(w - px, px), h);
        if (w >= options.min_label_px) out.labels.push_back({QRectF(ox + x0, y, w - px, h), row.track, i - 1});
        continue;
      }
      const bool touches = run.active && x0 <= run.x1 + 0.5 * px;
      if (touches && run.x1 - run.x0 < fold) {
        run.x1 = std::max(run.x1, x1);
        if (w > run.dominant_px) run.dominant_px = w, run.style = style;
      } else {
        flush();
        run = {true, style, x0, x1, w};
      }
      // Fast-forward (tracy's fold): every later span that ends inside this run's fold cell is
      // part of the run. The running max of ends finds the first one that does not by binary
      // search, so a zoomed-out row costs O(cells x log n) instead of O(n). A few spans in the
      // cell are walked (the widest gives the colour); a long stretch takes the colour of the
      // span in its middle (a point sample).
      if (run.x1 - run.x0 < fold) {
        const std::int64_t cell_end = ns_at(run.x0 + fold);
        const auto j = static_cast<std::size_t>(gallop_upper_bound(max_end.begin() + static_cast<std::ptrdiff_t>(i),
                                                                   max_end.begin() + static_cast<std::ptrdiff_t>(last),
                                                                   cell_end, [](std::int64_t e) { return e; }) -
                                                max_end.begin());
        if (j == i) continue;
        if (j - i <= kWalkLimit) {
          for (std::size_t k = i; k < j; ++k) {
            const double wk = static_cast<double>(spans[k].duration_ns) * px_per_ns;
            if (wk > run.dominant_px) run.dominant_px = wk, run.style = style_of(spans[k]);
          }
          out.spans_visited += j - i;
        } else {
          const est::Span& sample = spans[(i + j) / 2];
          const double sample_px = static_cast<double>(sample.duration_ns) * px_per_ns;
          if (sample_px >= run.dominant_px) run.dominant_px = sample_px, run.style = style_of(sample);
          ++out.spans_visited;
        }
        run.x1 = std::max(run.x1, std::min(x_of(max_end[j - 1]), width + px));
        i = j;
      }
    }
    flush();

    const auto& bubbles = index.track_index(row.track).bubbles;
    const std::int64_t until = std::min(axis.end_ns + 1, options.bubbles_until_ns);
    auto [b, b1] = index.visible_bubbles(row.track, axis.begin_ns, until);
    while (b < b1) {
      const double x0 = std::max(x_of(bubbles[b].begin_ns), -px);
      const double x1 = std::min(x_of(std::min(bubbles[b].end_ns, until)), width + px);
      if (x1 - x0 >= px) {
        out.bubbles.emplace_back(ox + x0, row.y, x1 - x0, row.height);
        ++b;
        continue;
      }
      // Invisible sliver: skip every bubble that ends within the next device pixel.
      const std::int64_t next = ns_at(x0 + px);
      b = static_cast<std::size_t>(gallop_upper_bound(bubbles.begin() + static_cast<std::ptrdiff_t>(b) + 1,
                                                      bubbles.begin() + static_cast<std::ptrdiff_t>(b1), next,
                                                      [](const est::Interval& iv) { return iv.end_ns; }) -
                                   bubbles.begin());
    }
  }
}

}  // namespace plansight::gui
