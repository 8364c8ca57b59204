// libFuzzer target: differential check of the chunked JSON scanner. The first byte picks a chunk
// size of 64..319 bytes; the rest is walked with that chunk and with one chunk holding it all.
// Both walks must render the same values and fail at the same byte, so any chunk-edge bug (a
// token or key view broken by a refill) shows as a mismatch.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "plansight/interop/byte_source.h"
#include "plansight/interop/json_scanner.h"
#include "plansight/interop/trace_error.h"

namespace {

using plansight::interop::JsonScanner;

void render(JsonScanner& s, std::string& out) {
  // Iterative on the scanner's own depth limit would be nicer; recursion is bounded by the
  // input length that libFuzzer passes (-max_len), well under the stack.
  switch (s.peek()) {
    case JsonScanner::Kind::object: {
      s.begin_object();
      out += '{';
      std::string_view key;
      while (s.next_key(key)) {
        out += '"';
        out += key;
        out += "\":";
        if (s.depth() < 200) render(s, out);
        else s.skip_value(), out += '~';
      }
      out += '}';
      break;
    }
    case JsonScanner::Kind::array:
      s.begin_array();
      out += '[';
      while (s.next_element()) {
        if (s.depth() < 200) render(s, out);
        else s.skip_value(), out += '~';
        out += ',';
      }
      out += ']';
      break;
    case JsonScanner::Kind::string: out += '"', out += s.read_string(), out += '"'; break;
    case JsonScanner::Kind::number: out += s.read_number(); break;
    case JsonScanner::Kind::boolean: out += s.read_bool() ? 't' : 'f'; break;
    case JsonScanner::Kind::null: s.read_null(), out += 'n'; break;
  }
}

std::string walk(std::string_view json, std::size_t chunk) {
  auto src = plansight::interop::make_memory_source(json);
  JsonScanner s(*src, chunk);
  std::string out;
  try {
    render(s, out);
    s.finish();
  } catch (const plansight::interop::TraceError& e) {
    out += "!error@" + std::to_string(e.offset());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 64 + data[0];
  const std::string_view json(reinterpret_cast<const char*>(data + 1), size - 1);
  if (walk(json, chunk) != walk(json, json.size() + 64)) std::abort();
  return 0;
}
