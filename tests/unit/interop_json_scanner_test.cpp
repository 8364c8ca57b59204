// The streaming JSON scanner and byte sources: values, escapes, chunk boundaries (a 64-byte
// chunk forces every token across a refill), error offsets, exact µs->ns conversion, gzip.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plansight/interop/byte_source.h"
#include "plansight/interop/json_number.h"
#include "plansight/interop/json_scanner.h"
#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string kFixtures = PLANSIGHT_TRACE_FIXTURE_DIR;

// Walks any document, rendering it back compactly; a round trip proves the scanner's view.
void render(JsonScanner& s, std::string& out) {
  switch (s.peek()) {
    case JsonScanner::Kind::object: {
      s.begin_object();
      out += '{';
      std::string_view key;
      bool first = true;
      while (s.next_key(key)) {
        if (!first) out += ',';
        first = false;
        out += '"' + std::string(key) + "\":";
        render(s, out);
      }
      out += '}';
      break;
    }
    case JsonScanner::Kind::array: {
      s.begin_array();
      out += '[';
      bool first = true;
      while (s.next_element()) {
        if (!first) out += ',';
        first = false;
        render(s, out);
      }
      out += ']';
      break;
    }
    case JsonScanner::Kind::string: out += '"' + std::string(s.read_string()) + '"'; break;
    case JsonScanner::Kind::number: out += std::string(s.read_number()); break;
    case JsonScanner::Kind::boolean: out += s.read_bool() ? "true" : "false"; break;
    case JsonScanner::Kind::null: s.read_null(), out += "null"; break;
  }
}

std::string roundtrip(std::string_view json, std::size_t chunk) {
  auto src = make_memory_source(json);
  JsonScanner s(*src, chunk);
  std::string out;
  render(s, out);
  s.finish();
  return out;
}

TEST(JsonScanner, ReadsEveryKindAcrossTinyChunks) {
  const std::string doc = R"(  {"a" : [1, -2.5e3, 0.125, true, false, null, {}, []],
      "long_key_that_crosses_chunks_for_sure_0123456789": "value \"quoted\" and \\ slash and \u00e9 and \ud83d\ude00",
      "n": {"deep": [[[[1]]]]}} )";
  const std::string expected =
      "{\"a\":[1,-2.5e3,0.125,true,false,null,{},[]],\"long_key_that_crosses_chunks_for_sure_0123456789\":"
      "\"value \"quoted\" and \\ slash and \xC3\xA9 and \xF0\x9F\x98\x80\",\"n\":{\"deep\":[[[[1]]]]}}";
  EXPECT_EQ(roundtrip(doc, 1 << 20), expected);
  EXPECT_EQ(roundtrip(doc, 64), expected);
}

// Every chunk size from 64 to 191 bytes puts some token, key or ':' exactly on a chunk edge.
// Regression: a key ending at the chunk's last byte lost its bytes when the refill for its ':'
// moved the chunk (seen as one cpu_op without its "tid" on a real 9.7 MB trace).
TEST(JsonScanner, EveryChunkEdgePosition) {
  std::string doc = "{";
  std::string expected = "{";
  for (int i = 0; i < 40; ++i) {
    const std::string key = "k" + std::to_string(i * 7919 % 1000);
    doc += (i ? ",  \"" : "\"") + key + "\"  :  [" + std::to_string(i) + ", \"v\\n" + std::to_string(i) + "\"]";
    expected += (i ? ",\"" : "\"") + key + "\":[" + std::to_string(i) + ",\"v\n" + std::to_string(i) + "\"]";
  }
  doc += "}";
  expected += "}";
  for (std::size_t chunk = 64; chunk < 192; ++chunk) EXPECT_EQ(roundtrip(doc, chunk), expected) << "chunk " << chunk;
}

TEST(JsonScanner, SkipValueSkipsNestedValues) {
  const std::string doc = R"({"skip": {"x": [1, {"y": "}]"}], "z": "\"{"}, "keep": 7})";
  auto src = make_memory_source(doc);
  JsonScanner s(*src, 64);
  s.begin_object();
  std::string_view key;
  ASSERT_TRUE(s.next_key(key));
  EXPECT_EQ(key, "skip");
  s.skip_value();
  ASSERT_TRUE(s.next_key(key));
  EXPECT_EQ(key, "keep");
  EXPECT_EQ(s.read_number(), "7");
  EXPECT_FALSE(s.next_key(key));
  s.finish();
}

struct BadCase {
  const char* json;
  std::uint64_t offset;
  const char* message;
};

class JsonScannerErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(JsonScannerErrors, ReportsByteOffset) {
  const BadCase& c = GetParam();
  try {
    roundtrip(c.json, 64);
    FAIL() << "accepted " << c.json;
  } catch (const TraceError& e) {
    EXPECT_EQ(e.offset(), c.offset) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at byte " + std::to_string(c.offset)), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonScannerErrors,
    ::testing::Values(BadCase{R"({"a": [1, 2)", 11, "unexpected end of input"},
                      BadCase{R"({"a": "unterminated)", 6, "inside a string"},
                      BadCase{R"({"a": 1,})", 8, "expected a string key"},
                      BadCase{R"([1, ])", 4, "expected a value"},
                      BadCase{R"({"a" 1})", 5, "expected ':'"},
                      BadCase{R"({"a": 01})", 6, "malformed number"},
                      BadCase{R"({"a": tru})", 6, "expected true or false"},
                      BadCase{R"({"a": "\x"})", 8, "invalid escape"},
                      BadCase{R"({"a": 1} x)", 9, "after the JSON document"},
                      BadCase{R"({"a": 1 "b": 2})", 8, "expected ',' or '}'"}));

TEST(JsonScanner, DepthIsLimited) {
  const std::string deep(JsonScanner::kMaxDepth + 1, '[');
  auto src = make_memory_source(deep);
  JsonScanner s(*src, 1 << 16);
  EXPECT_THROW(s.skip_value(), TraceError);
}

TEST(JsonNumber, MicrosecondsToNanosecondsExactly) {
  std::int64_t ns = 0;
  ASSERT_TRUE(microseconds_text_to_ns("4458676388068.751", ns));
  EXPECT_EQ(ns, 4'458'676'388'068'751);
  ASSERT_TRUE(microseconds_text_to_ns("1694128201421058", ns));  // epoch µs, beyond double's ns precision
  EXPECT_EQ(ns, 1'694'128'201'421'058'000);
  ASSERT_TRUE(microseconds_text_to_ns("2.0005", ns));  // half rounds away from zero
  EXPECT_EQ(ns, 2'001);
  ASSERT_TRUE(microseconds_text_to_ns("-1.2344", ns));
  EXPECT_EQ(ns, -1'234);
  ASSERT_TRUE(microseconds_text_to_ns("1.5e3", ns));
  EXPECT_EQ(ns, 1'500'000);
  ASSERT_TRUE(microseconds_text_to_ns("68.0", ns));
  EXPECT_EQ(ns, 68'000);
  EXPECT_FALSE(microseconds_text_to_ns("9.3e15", ns));  // overflows int64 ns
  // Found by fuzz_kineto_importer: a long digit run overflowed the fast path before its length check.
  EXPECT_FALSE(microseconds_text_to_ns("33333333333333333333", ns));
  ASSERT_TRUE(microseconds_text_to_ns("9223372036854775", ns));  // 16 digits: general path, fits
  EXPECT_EQ(ns, 9'223'372'036'854'775'000);
  EXPECT_FALSE(microseconds_text_to_ns("1e999999", ns));
  std::int64_t v = 0;
  ASSERT_TRUE(number_text_to_int64("7.0", v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(number_text_to_int64("7.5", v));
  ASSERT_TRUE(number_text_to_int64("-9223372036854775808", v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(number_text_to_int64("9223372036854775808", v));
}

TEST(ByteSource, GzipIsRecognisedByContent) {
  const std::string gz = read_file(kFixtures + "/kineto_multirank_gz/rank1.json.gz");
  const std::string plain = read_file(kFixtures + "/kineto_multirank/rank1.json");
  ASSERT_TRUE(looks_like_gzip(gz));
  auto src = make_trace_source(gz);
  std::string out;
  char buf[100];
  for (std::size_t n; (n = src->read(buf, sizeof buf)) > 0;) out.append(buf, n);
  EXPECT_EQ(out, plain);
  EXPECT_EQ(make_trace_source(plain)->kind(), "memory");
}

TEST(ByteSource, TruncatedGzipFailsWithOffset) {
  const std::string gz = read_file(kFixtures + "/kineto_multirank_gz/rank0.json.gz");
  const std::string cut = gz.substr(0, gz.size() / 2);
  auto src = make_trace_source(cut);
  char buf[4096];
  try {
    while (src->read(buf, sizeof buf) > 0) {
    }
    FAIL() << "truncated gzip accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_EQ(e.offset(), cut.size());
  }
  std::string corrupt = gz;
  corrupt[gz.size() / 2] = static_cast<char>(corrupt[gz.size() / 2] ^ 0x5A);
  corrupt[gz.size() / 2 + 1] = static_cast<char>(corrupt[gz.size() / 2 + 1] ^ 0x5A);
  auto bad = make_trace_source(corrupt);
  EXPECT_THROW(
      {
        while (bad->read(buf, sizeof buf) > 0) {
        }
      },
      TraceError);
}

TEST(ByteSource, MissingFileNamesThePath) {
  try {
    open_file_source("/nonexistent/plansight/trace.json");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/plansight/trace.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace plansight::interop
