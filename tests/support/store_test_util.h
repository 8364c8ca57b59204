// Helpers for the store's tests: a temporary folder that removes itself, timelines (random with
// extreme values, and trace-like with back-to-back kernels), and a field-for-field comparison
// that treats doubles bit for bit, so NaN and -0.0 round trips are checked too.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>

#include "plansight/estimator/timeline.h"

namespace plansight::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "plansight-store-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Any value the type can hold, weighted towards the edges an encoder gets wrong.
inline estimator::Timeline random_timeline(std::uint64_t seed, std::size_t spans) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  auto i64 = [&]() -> std::int64_t {
    switch (pick(8)) {
      case 0: return std::numeric_limits<std::int64_t>::min();
      case 1: return std::numeric_limits<std::int64_t>::max();
      case 2: return -static_cast<std::int64_t>(pick(1000));
      case 3: return static_cast<std::int64_t>(rng());
      default: return static_cast<std::int64_t>(pick(1'000'000'000));
    }
  };
  auto i32 = [&]() -> std::int32_t {
    switch (pick(6)) {
      case 0: return std::numeric_limits<std::int32_t>::min();
      case 1: return std::numeric_limits<std::int32_t>::max();
      case 2: return -1;
      default: return static_cast<std::int32_t>(pick(64));
    }
  };
  auto f64 = [&]() -> double {
    switch (pick(10)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return -0.0;
      case 2: return std::numeric_limits<double>::infinity();
      case 3: return 9007199254740992.0;  // 2^53: the largest varint-encoded whole number
      case 4: return 9007199254740994.0;  // 2^53 + 2: whole but raw
      case 5: return std::bit_cast<double>(rng());
      case 6: return static_cast<double>(pick(1ULL << 40));
      case 7: return 0.5 + static_cast<double>(pick(1000));
      default: return 0.0;
    }
  };
  estimator::Timeline t;
  t.source = static_cast<estimator::TimelineSource>(pick(3));
  t.title = "random " + std::to_string(seed);
  for (int i = 0; i < 50; ++i)
    t.names.push_back(i % 7 == 0 ? std::string() : "kernel_" + std::to_string(rng()));
  const std::size_t tracks = 1 + pick(12);
  for (std::size_t k = 0; k < tracks; ++k) {
    estimator::Track track;
    track.rank = i32();
    track.lane = static_cast<estimator::Lane>(pick(4));
    track.stream = i32();
    track.label = pick(2) ? "rank " + std::to_string(k) : std::string();
    t.tracks.push_back(std::move(track));
  }
  for (std::size_t i = 0; i < spans; ++i) {
    estimator::Span s;
    // Mostly sorted, back-to-back; sometimes anything at all.
    auto& track = t.tracks[pick(tracks)];
    // Wrapping arithmetic: the previous start may be INT64_MAX.
    const std::uint64_t prev_end =
        track.spans.empty() ? 0 : static_cast<std::uint64_t>(track.spans.back().start_ns) + 1000;
    s.start_ns = pick(4) == 0 ? i64() : static_cast<std::int64_t>(prev_end + pick(100));
    s.duration_ns = pick(4) == 0 ? i64() : static_cast<std::int64_t>(pick(5'000'000));
    s.flops = f64();
    s.bytes = f64();
    s.name_id = pick(5) == 0 ? i32() : static_cast<std::int32_t>(pick(60)) - 5;
    s.stage = pick(3) == 0 ? i32() : static_cast<std::int32_t>(pick(4));
    s.micro_batch = pick(3) == 0 ? i32() : static_cast<std::int32_t>(pick(16));
    s.kind = static_cast<estimator::SpanKind>(pick(9));
    s.phase = static_cast<estimator::Phase>(pick(7));
    s.tensor_core = pick(2) == 1;
    track.spans.push_back(s);
  }
  return t;
}

// `t` with thread CPU times (Span::cpu_ns) on its first track and about half of the others, as a
// CPU probe's measured step has them: mostly near the span's duration (computing) or near 0
// (waiting), sometimes missing (-1) or extreme.
inline estimator::Timeline with_cpu_times(estimator::Timeline t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  for (auto& track : t.tracks) {
    if (pick(2) == 0 && &track != &t.tracks.front()) continue;
    for (auto& s : track.spans) {
      const std::int64_t d = s.duration_ns > 0 ? s.duration_ns : 0;
      switch (pick(6)) {
        case 0: s.cpu_ns = -1; break;
        case 1: s.cpu_ns = static_cast<std::int64_t>(pick(2000)); break;
        case 2: s.cpu_ns = std::numeric_limits<std::int64_t>::max(); break;
        default: s.cpu_ns = d - std::min<std::int64_t>(d, static_cast<std::int64_t>(pick(5000))); break;
      }
    }
  }
  return t;
}

// `t` with operators (Span::operator_id) on about half of its tracks' spans, as a GPU run's
// kernels, copies and memsets carry the operator that launched them: a name index, usually the
// same as the span before's, sometimes none (-1).
inline estimator::Timeline with_operators(estimator::Timeline t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return rng() % n; };
  if (t.names.empty()) t.names.push_back("qkv");
  for (auto& track : t.tracks) {
    if (pick(2) == 0 && &track != &t.tracks.front()) continue;
    std::int32_t op = -1;
    for (auto& s : track.spans) {
      if (pick(4) == 0) op = pick(5) == 0 ? -1 : static_cast<std::int32_t>(pick(t.names.size()));
      s.operator_id = op;
    }
  }
  return t;
}

// Like a measured trace: per rank a compute lane of back-to-back kernels (a few hundred distinct
// names, repeated layer after layer; whole-number FLOPs) and a communication lane of collectives.
inline estimator::Timeline trace_like_timeline(std::uint64_t seed, std::int32_t ranks,
                                               std::size_t kernels_per_rank) {
  std::mt19937_64 rng(seed);
  estimator::Timeline t;
  t.source = estimator::TimelineSource::measured;
  t.title = "trace-like";
  for (int i = 0; i < 200; ++i) t.names.push_back("ampere_sgemm_128x64_nn_" + std::to_string(i));
  for (std::int32_t r = 0; r < ranks; ++r) {
    estimator::Track compute{r, estimator::Lane::compute, 7, "rank " + std::to_string(r) + " compute", {}};
    estimator::Track comm{r, estimator::Lane::communication, 13, "rank " + std::to_string(r) + " nccl", {}};
    std::int64_t now = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(rng() % 1'000'000);
    for (std::size_t k = 0; k < kernels_per_rank; ++k) {
      estimator::Span s;
      s.start_ns = now + static_cast<std::int64_t>(rng() % 4);  // launch gaps of a few ns
      s.duration_ns = 2'000 + static_cast<std::int64_t>(rng() % 300'000);
      s.name_id = static_cast<std::int32_t>(k % 24);  // a layer runs the same 24 kernels
      s.stage = 0;
      s.micro_batch = static_cast<std::int32_t>(k / 240);
      s.phase = (k / 120) % 2 ? estimator::Phase::backward : estimator::Phase::forward;
      if (k % 24 < 12) {
        s.flops = 2.0 * 4096 * 4096 * static_cast<double>(512 + (k % 24) * 64);
        s.tensor_core = true;
      }
      compute.spans.push_back(s);
      now = s.end_ns();
      if (k % 24 == 23) {
        estimator::Span c;
        c.start_ns = now - 50'000;
        c.duration_ns = 80'000 + static_cast<std::int64_t>(rng() % 20'000);
        c.kind = estimator::SpanKind::collective;
        c.phase = estimator::Phase::communication;
        c.name_id = 199;
        c.micro_batch = s.micro_batch;
        c.bytes = 2.0 * 4096 * 4096;
        comm.spans.push_back(c);
      }
    }
    t.tracks.push_back(std::move(compute));
    t.tracks.push_back(std::move(comm));
  }
  return t;
}

inline bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Every field, doubles bit for bit; the message names the first difference.
inline ::testing::AssertionResult same_timeline(const estimator::Timeline& a, const estimator::Timeline& b) {
  if (a.source != b.source) return ::testing::AssertionFailure() << "source differs";
  if (a.title != b.title) return ::testing::AssertionFailure() << "title differs";
  if (a.names != b.names) return ::testing::AssertionFailure() << "names differ";
  if (a.tracks.size() != b.tracks.size()) return ::testing::AssertionFailure() << "track count differs";
  for (std::size_t t = 0; t < a.tracks.size(); ++t) {
    const auto& x = a.tracks[t];
    const auto& y = b.tracks[t];
    if (x.rank != y.rank || x.lane != y.lane || x.stream != y.stream || x.label != y.label) {
      return ::testing::AssertionFailure() << "track " << t << " header differs";
    }
    if (x.spans.size() != y.spans.size())
      return ::testing::AssertionFailure() << "track " << t << " span count differs";
    for (std::size_t i = 0; i < x.spans.size(); ++i) {
      const auto& p = x.spans[i];
      const auto& q = y.spans[i];
      if (p.start_ns != q.start_ns || p.duration_ns != q.duration_ns || !same_bits(p.flops, q.flops) ||
          !same_bits(p.bytes, q.bytes) || p.name_id != q.name_id || p.stage != q.stage ||
          p.micro_batch != q.micro_batch || p.kind != q.kind || p.phase != q.phase ||
          p.tensor_core != q.tensor_core || p.cpu_ns != q.cpu_ns || p.operator_id != q.operator_id) {
        return ::testing::AssertionFailure() << "track " << t << " span " << i << " differs (start "
                                             << p.start_ns << " vs " << q.start_ns << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace plansight::testing
