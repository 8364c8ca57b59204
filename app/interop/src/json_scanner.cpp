// Chunked pull parser. Hot paths (whitespace, strings, keys) work on raw bytes of the current
// chunk; a token that crosses the chunk end triggers a refill that keeps the token's bytes, and
// the buffer grows only when a single token is larger than it.
#include "plansight/interop/json_scanner.h"

#include <cstring>

#include "plansight/interop/json_number.h"
#include "plansight/interop/trace_error.h"

namespace plansight::interop {
namespace {

bool is_digit(int c) { return c >= '0' && c <= '9'; }
bool is_number_char(char c) { return is_digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace


JsonScanner::JsonScanner(ByteSource& source, std::size_t chunk_bytes)
    : source_(source), buf_(new char[std::max<std::size_t>(chunk_bytes, 64)]), cap_(std::max<std::size_t>(chunk_bytes, 64)) {}

void JsonScanner::fail(const std::string& what) const {
  throw TraceError(offset(), "invalid JSON at byte " + std::to_string(offset()) + ": " + what);
}

bool JsonScanner::refill(std::size_t& keep_from) {
  if (eof_) return false;
  if (keep_from > 0) {
    const std::size_t keep = end_ - keep_from;
    std::memmove(buf_.get(), buf_.get() + keep_from, keep);
    base_ += keep_from;
    pos_ -= keep_from;
    end_ = keep;
    keep_from = 0;
  }
  if (end_ == cap_) {  // one token fills the chunk: grow
    std::unique_ptr<char[]> bigger(new char[cap_ * 2]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    cap_ *= 2;
  }
  const std::size_t n = source_.read(buf_.get() + end_, cap_ - end_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

int JsonScanner::next_char() {
  for (;;) {
    const char* b = buf_.get();
    while (pos_ < end_) {
      const char c = b[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
      ++pos_;
    }
    std::size_t keep = pos_;
    if (!refill(keep)) return -1;
  }
}

void JsonScanner::expect(char c) {
  const int got = next_char();
  if (got != c) {
    fail(got < 0 ? std::string("unexpected end of input, expected '") + c + "'"
                 : std::string("expected '") + c + "', found '" + static_cast<char>(got) + "'");
  }
  ++pos_;
}

JsonScanner::Kind JsonScanner::peek() {
  const int c = next_char();
  switch (c) {
    case '{': return Kind::object;
    case '[': return Kind::array;
    case '"': return Kind::string;
    case 't':
    case 'f': return Kind::boolean;
    case 'n': return Kind::null;
    case -1: fail("unexpected end of input, expected a value");
    default:
      if (c == '-' || is_digit(c)) return Kind::number;
      fail(std::string("unexpected character '") + static_cast<char>(c) + "', expected a value");
  }
}

void JsonScanner::push(char open) {
  if (stack_.size() >= kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  stack_.push_back(open);
  first_.push_back(1);
}

void JsonScanner::begin_object() {
  expect('{');
  push('{');
}

void JsonScanner::begin_array() {
  expect('[');
  push('[');
}

bool JsonScanner::close_or_comma(char close) {
  const int c = next_char();
  if (c < 0) fail(std::string("unexpected end of input, expected ',' or '") + close + "'");
  if (c == close) {
    ++pos_;
    stack_.pop_back();
    first_.pop_back();
    return false;
  }
  if (first_.back()) {
    first_.back() = 0;
    return true;
  }
  if (c != ',') fail(std::string("expected ',' or '") + close + "', found '" + static_cast<char>(c) + "'");
  ++pos_;
  return true;
}

bool JsonScanner::next_key(std::string_view& key) {
  if (stack_.empty() || stack_.back() != '{') fail("internal: next_key outside an object");
  if (!close_or_comma('}')) return false;
  const int c = next_char();
  if (c != '"') fail(c < 0 ? "unexpected end of input, expected a key" : "expected a string key");
  key = scan_string(true);
  // The ':' is usually right after the key. If reaching it needs a refill, the refill would move
  // the chunk under the key's view, so the key is copied first.
  std::size_t j = pos_;
  const char* b = buf_.get();
  while (j < end_ && (b[j] == ' ' || b[j] == '\n' || b[j] == '\r' || b[j] == '\t')) ++j;
  if (j < end_ && b[j] == ':') {
    pos_ = j + 1;
    return true;
  }
  key_copy_.assign(key);
  key = key_copy_;
  expect(':');
  return true;
}

bool JsonScanner::next_element() {
  if (stack_.empty() || stack_.back() != '[') fail("internal: next_element outside an array");
  return close_or_comma(']');
}

std::string_view JsonScanner::read_string() {
  const int c = next_char();
  if (c != '"') fail(c < 0 ? "unexpected end of input, expected a string" : "expected a string");
  return scan_string(true);
}

// At pos_ is the opening quote. Finds the closing quote with memchr, skipping escaped quotes;
// escapes are decoded (and so validated) only when the string has a backslash.
std::string_view JsonScanner::scan_string(bool decode) {
  std::size_t quote = pos_;
  std::size_t scan = quote + 1;
  for (;;) {
    const char* b = buf_.get();
    const void* hit = scan < end_ ? std::memchr(b + scan, '"', end_ - scan) : nullptr;
    if (!hit) {
      const std::size_t rel = end_ - quote;
      if (!refill(quote)) fail("unexpected end of input inside a string");
      scan = quote + rel;
      continue;
    }
    const std::size_t close = static_cast<std::size_t>(static_cast<const char*>(hit) - b);
    std::size_t backslashes = 0;
    while (close - backslashes > quote + 1 && b[close - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 1) {
      scan = close + 1;
      continue;
    }
    const std::size_t begin = quote + 1;
    pos_ = close + 1;
    if (std::memchr(b + begin, '\\', close - begin) == nullptr) return {b + begin, close - begin};
    decode_escapes(begin, close);
    if (!decode) return {};
    return scratch_;
  }
}

void JsonScanner::decode_escapes(std::size_t begin, std::size_t end) {
  const char* b = buf_.get();
  scratch_.clear();
  auto bad = [&](std::size_t at, const std::string& what) {
    throw TraceError(base_ + at, "invalid JSON at byte " + std::to_string(base_ + at) + ": " + what);
  };
  auto hex4 = [&](std::size_t at) -> std::uint32_t {
    if (at + 4 > end) bad(at, "truncated \\u escape");
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int h = hex_value(b[at + k]);
      if (h < 0) bad(at + k, "bad hex digit in \\u escape");
      v = v * 16 + static_cast<std::uint32_t>(h);
    }
    return v;
  };
  for (std::size_t i = begin; i < end;) {
    const char* slash = static_cast<const char*>(std::memchr(b + i, '\\', end - i));
    const std::size_t stop = slash ? static_cast<std::size_t>(slash - b) : end;
    scratch_.append(b + i, stop - i);
    if (!slash) break;
    i = stop + 1;
    if (i >= end) bad(i, "unfinished escape");
    switch (b[i]) {
      case '"': scratch_.push_back('"'); ++i; break;
      case '\\': scratch_.push_back('\\'); ++i; break;
      case '/': scratch_.push_back('/'); ++i; break;
      case 'b': scratch_.push_back('\b'); ++i; break;
      case 'f': scratch_.push_back('\f'); ++i; break;
      case 'n': scratch_.push_back('\n'); ++i; break;
      case 'r': scratch_.push_back('\r'); ++i; break;
      case 't': scratch_.push_back('\t'); ++i; break;
      case 'u': {
        std::uint32_t cp = hex4(i + 1);
        i += 5;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < end && b[i] == '\\' && b[i + 1] == 'u') {
          const std::uint32_t low = hex4(i + 2);
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // lone surrogate: replacement character
        append_utf8(scratch_, cp);
        break;
      }
      default: bad(i, "invalid escape '\\" + std::string(1, b[i]) + "'");
    }
  }
}

std::string_view JsonScanner::read_number() {
  const int c = next_char();
  if (c != '-' && !is_digit(c)) fail(c < 0 ? "unexpected end of input, expected a number" : "expected a number");
  std::size_t start = pos_;
  std::size_t i = pos_;
  for (;;) {
    const char* b = buf_.get();
    while (i < end_ && is_number_char(b[i])) ++i;
    if (i < end_) break;
    const std::size_t rel = i - start;
    const bool more = refill(start);
    i = start + rel;
    if (!more) break;
  }
  const std::string_view text(buf_.get() + start, i - start);
  if (!valid_number(text)) fail("malformed number '" + std::string(text.substr(0, 40)) + "'");
  pos_ = i;
  return text;
}

bool JsonScanner::read_bool() {
  const int c = next_char();
  const std::string_view want = c == 't' ? "true" : "false";
  while (end_ - pos_ < want.size()) {
    std::size_t keep = pos_;
    if (!refill(keep)) break;
  }
  if (end_ - pos_ < want.size() || std::memcmp(buf_.get() + pos_, want.data(), want.size()) != 0) {
    fail("expected true or false");
  }
  pos_ += want.size();
  return c == 't';
}

void JsonScanner::read_null() {
  next_char();
  while (end_ - pos_ < 4) {
    std::size_t keep = pos_;
    if (!refill(keep)) break;
  }
  if (end_ - pos_ < 4 || std::memcmp(buf_.get() + pos_, "null", 4) != 0) fail("expected null");
  pos_ += 4;
}

void JsonScanner::skip_value() {
  const std::size_t depth0 = stack_.size();
  do {
    switch (peek()) {
      case Kind::object: begin_object(); break;
      case Kind::array: begin_array(); break;
      case Kind::string: next_char(), scan_string(false); break;
      case Kind::number: read_number(); break;
      case Kind::boolean: read_bool(); break;
      case Kind::null: read_null(); break;
    }
    // Close finished containers until one wants another member.
    while (stack_.size() > depth0) {
      if (stack_.back() == '{') {
        if (!close_or_comma('}')) continue;
        const int c = next_char();
        if (c != '"') fail(c < 0 ? "unexpected end of input, expected a key" : "expected a string key");
        scan_string(false);
        expect(':');
        break;
      }
      if (close_or_comma(']')) break;
    }
  } while (stack_.size() > depth0);
}

void JsonScanner::finish() {
  if (!stack_.empty()) fail("document not finished");
  if (next_char() >= 0) fail("unexpected data after the JSON document");
}

}  // namespace plansight::interop
