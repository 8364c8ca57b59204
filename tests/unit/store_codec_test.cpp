// The timeline codec: exact round trips (random timelines with extreme values, 100k spans), size
// on a trace-like timeline, and that truncated, corrupted or forged blobs give errors, not crashes.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string_view>

#include "../support/store_test_util.h"
#include "crc32.h"  // app/store/src: to forge checksums over corrupted bodies
#include "plansight/store/timeline_codec.h"

namespace plansight::store {
namespace {

using plansight::testing::random_timeline;
using plansight::testing::same_timeline;
using plansight::testing::trace_like_timeline;
using plansight::testing::with_cpu_times;
using plansight::testing::with_operators;

std::vector<std::uint8_t> encode_ok(const estimator::Timeline& t) {
  auto bytes = encode_timeline(t);
  EXPECT_TRUE(bytes.ok()) << bytes.error_text();
  return bytes.ok() ? *bytes : std::vector<std::uint8_t>{};
}

void reseal(std::vector<std::uint8_t>& bytes) {  // rewrite the trailing CRC over the body
  const auto crc = detail::crc32(std::span(bytes).first(bytes.size() - 4));
  for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
}

TEST(TimelineCodec, Crc32MatchesTheStandardCheckValue) {
  const std::string_view check = "123456789";  // CRC-32/ISO-HDLC check value 0xCBF43926
  EXPECT_EQ(detail::crc32({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}), 0xCBF43926U);
}

TEST(TimelineCodec, EmptyTimelineRoundTrips) {
  const estimator::Timeline empty;
  auto decoded = decode_timeline(encode_ok(empty));
  ASSERT_TRUE(decoded.ok()) << decoded.error_text();
  EXPECT_TRUE(same_timeline(empty, *decoded));
}

TEST(TimelineCodec, RandomTimelinesOf100kSpansRoundTripFieldForField) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto original = random_timeline(seed, 100'000);
    const auto bytes = encode_ok(original);
    auto decoded = decode_timeline(bytes);
    ASSERT_TRUE(decoded.ok()) << "seed " << seed << ": " << decoded.error_text();
    EXPECT_TRUE(same_timeline(original, *decoded)) << "seed " << seed;
  }
}

TEST(TimelineCodec, ThreadCpuTimesRoundTripAsVersion2) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto original = with_cpu_times(random_timeline(seed, 20'000), seed + 100);
    const auto bytes = encode_ok(original);
    ASSERT_GT(bytes.size(), 4U);
    EXPECT_EQ(bytes[4], timeline_format_version_without_operators) << "seed " << seed;
    auto decoded = decode_timeline(bytes);
    ASSERT_TRUE(decoded.ok()) << "seed " << seed << ": " << decoded.error_text();
    EXPECT_TRUE(same_timeline(original, *decoded)) << "seed " << seed;
  }
}

// A timeline without CPU times is written as before, so that a program that reads version 1
// only still reads every predicted and imported timeline.
TEST(TimelineCodec, WithoutCpuTimesTheVersion1BytesAreWritten) {
  const auto plain = random_timeline(21, 2'000);
  const auto bytes = encode_ok(plain);
  ASSERT_GT(bytes.size(), 4U);
  EXPECT_EQ(bytes[4], timeline_format_version_without_cpu_time);
  EXPECT_EQ(timeline_format_version_of(plain), timeline_format_version_without_cpu_time);
  // One CPU time makes it version 2, and only its track pays for the field.
  auto one = plain;
  ASSERT_FALSE(one.tracks.empty());
  auto& track = one.tracks.front();
  ASSERT_FALSE(track.spans.empty());
  track.spans.front().cpu_ns = 5;
  const auto with_one = encode_ok(one);
  EXPECT_EQ(with_one[4], timeline_format_version_without_operators);
  EXPECT_LE(with_one.size(), bytes.size() + one.tracks.size() + 10 * track.spans.size());
  auto decoded = decode_timeline(with_one);
  ASSERT_TRUE(decoded.ok()) << decoded.error_text();
  EXPECT_TRUE(same_timeline(one, *decoded));
}

// Operators (a GPU run's kernels, Span::operator_id) round-trip with and without CPU times, in
// version 3; only the tracks that have one pay for the field, and a timeline with CPU times but
// no operators stays version 2.
TEST(TimelineCodec, OperatorsRoundTripInVersion3) {
  for (std::uint64_t seed = 31; seed < 37; ++seed) {
    const auto plain = random_timeline(seed, 1'500);
    const auto with_ops = with_operators(plain, seed);
    const auto both = with_cpu_times(with_ops, seed + 100);
    for (const auto* original : {&with_ops, &both}) {
      const auto bytes = encode_ok(*original);
      EXPECT_EQ(bytes[4], timeline_format_version) << "seed " << seed;
      EXPECT_EQ(timeline_format_version_of(*original), timeline_format_version);
      auto decoded = decode_timeline(bytes);
      ASSERT_TRUE(decoded.ok()) << "seed " << seed << ": " << decoded.error_text();
      EXPECT_TRUE(same_timeline(*original, *decoded)) << "seed " << seed;
    }
    std::size_t spans = 0;
    for (const auto& track : plain.tracks) spans += track.spans.size();
    EXPECT_LE(encode_ok(with_ops).size(), encode_ok(plain).size() + plain.tracks.size() + 10 * spans);
    const auto cpu_only = with_cpu_times(plain, seed + 100);
    EXPECT_EQ(encode_ok(cpu_only)[4], timeline_format_version_without_operators);
  }
}

TEST(TimelineCodec, OperatorOutsideTheNamesIsRefusedByName) {
  auto t = random_timeline(23, 50);
  t.tracks.front().spans.push_back(estimator::Span{});
  t.tracks.front().spans.back().operator_id = static_cast<std::int32_t>(t.names.size());
  auto bytes = encode_timeline(t);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error_text().find("operator_id"), std::string::npos) << bytes.error_text();
  EXPECT_NE(bytes.error_text().find("valid: -1"), std::string::npos) << bytes.error_text();
}

TEST(TimelineCodec, NegativeCpuTimeIsRefusedByName) {
  auto t = random_timeline(22, 50);
  t.tracks.front().spans.push_back(estimator::Span{});
  t.tracks.front().spans.back().cpu_ns = -2;
  auto bytes = encode_timeline(t);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error_text().find("cpu_ns"), std::string::npos) << bytes.error_text();
  EXPECT_NE(bytes.error_text().find("-2"), std::string::npos) << bytes.error_text();
}

TEST(TimelineCodec, TraceLikeTimelineIsCompact) {
  const auto original = trace_like_timeline(7, 8, 12'500);
  std::size_t spans = 0;
  for (const auto& t : original.tracks) spans += t.spans.size();
  const auto bytes = encode_ok(original);
  auto decoded = decode_timeline(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error_text();
  EXPECT_TRUE(same_timeline(original, *decoded));
  const double per_span = static_cast<double>(bytes.size()) / static_cast<double>(spans);
  std::printf("trace-like timeline: %zu spans, %zu bytes, %.2f bytes/span (in memory: %zu bytes/span)\n",
              spans, bytes.size(), per_span, sizeof(estimator::Span));
  // Measured 6.2 bytes/span when written; 8 leaves room without hiding a regression to raw (48).
  EXPECT_LT(per_span, 8.0);
}

TEST(TimelineCodec, EveryTruncationIsAnError) {
  const auto bytes = encode_ok(random_timeline(11, 300));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = decode_timeline(std::span(bytes).first(n));
    ASSERT_FALSE(decoded.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(TimelineCodec, EveryTruncationOfVersion2IsAnError) {
  const auto bytes = encode_ok(with_cpu_times(random_timeline(11, 300), 3));
  ASSERT_EQ(bytes[4], timeline_format_version_without_operators);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = decode_timeline(std::span(bytes).first(n));
    ASSERT_FALSE(decoded.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(TimelineCodec, EveryTruncationOfVersion3IsAnError) {
  const auto bytes = encode_ok(with_cpu_times(with_operators(random_timeline(13, 300), 4), 5));
  ASSERT_EQ(bytes[4], timeline_format_version);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = decode_timeline(std::span(bytes).first(n));
    ASSERT_FALSE(decoded.ok()) << "prefix of " << n << " bytes decoded";
  }
}

TEST(TimelineCodec, EveryFlippedBitIsAnError) {
  const auto bytes = encode_ok(random_timeline(12, 100));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto copy = bytes;
      copy[i] ^= static_cast<std::uint8_t>(1U << bit);
      auto decoded = decode_timeline(copy);
      ASSERT_FALSE(decoded.ok()) << "byte " << i << " bit " << bit;
    }
  }
  auto copy = bytes;
  copy[10] ^= 1;
  EXPECT_NE(decode_timeline(copy).error_text().find("CRC-32"), std::string::npos);
}

// Corruption the checksum cannot see (forged CRC): the parser alone must stay safe. Run under
// the sanitizer preset to check memory safety too.
TEST(TimelineCodec, ForgedChecksumsNeverCrash) {
  const auto bytes = encode_ok(random_timeline(13, 500));
  std::mt19937_64 rng(99);
  int errors = 0;
  for (int trial = 0; trial < 5'000; ++trial) {
    auto copy = bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      copy[6 + rng() % (copy.size() - 10)] = static_cast<std::uint8_t>(rng());
    }
    if (rng() % 4 == 0) copy.resize(6 + 4 + rng() % (copy.size() - 10));
    reseal(copy);
    auto decoded = decode_timeline(copy);
    if (!decoded.ok()) ++errors;
  }
  EXPECT_GT(errors, 2'500);  // most random edits break the structure; none crash
}

TEST(TimelineCodec, HugeCountsAreRefusedBeforeAllocating) {
  // magic, version, source, empty title, 0 names, 1 track, rank 0, lane 0, stream 0, empty label,
  // then a span count of 2^62 in a varint, and a CRC.
  std::vector<std::uint8_t> bytes = {'P', 'S', 'T', 'L', timeline_format_version_without_cpu_time, 0, 0, 0, 1, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) bytes.push_back(0x80);
  bytes.push_back(0x40);
  bytes.insert(bytes.end(), 4, 0);
  reseal(bytes);
  auto decoded = decode_timeline(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error_text().find("span count"), std::string::npos) << decoded.error_text();
}

TEST(TimelineCodec, NewerFormatVersionIsNamed) {
  auto bytes = encode_ok(random_timeline(14, 10));
  bytes[4] = timeline_format_version + 1;
  reseal(bytes);
  auto decoded = decode_timeline(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error_text().find("format version " + std::to_string(timeline_format_version + 1)), std::string::npos)
      << decoded.error_text();
}

TEST(TimelineCodec, NotATimelineIsNamed) {
  const std::string text = "hello, this is not a timeline";
  auto decoded = decode_timeline({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  ASSERT_FALSE(decoded.ok());
  EXPECT_FALSE(decode_timeline({}).ok());
}

TEST(TimelineCodec, OutOfRangeEnumsAreRefusedOnEncode) {
  estimator::Timeline t;
  t.tracks.push_back({});
  t.tracks[0].spans.push_back({});
  t.tracks[0].spans[0].kind = static_cast<estimator::SpanKind>(9);
  auto bytes = encode_timeline(t);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error_text().find("timeline.tracks[0].spans[0]"), std::string::npos) << bytes.error_text();
  t.tracks[0].spans[0].kind = estimator::SpanKind::idle;
  t.tracks[0].lane = static_cast<estimator::Lane>(4);
  EXPECT_FALSE(encode_timeline(t).ok());
}

}  // namespace
}  // namespace plansight::store
