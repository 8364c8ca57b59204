// JsonScanner: a pull parser over a ByteSource that holds one chunk of the input at a time, so a
// multi-gigabyte trace is read in bounded memory. The caller walks the document (begin_object,
// next_key, read_string, skip_value, ...) and keeps only what it needs; strings and numbers come
// back as views into the chunk, valid until the next call. Every syntax error and every early
// end throws TraceError with the byte offset in the (decompressed) JSON text.
//
// Strictness: RFC 8259 grammar for structure, numbers, literals and escapes (including \u
// surrogate pairs). Raw control characters inside strings are accepted, as most producers'
// readers do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/interop/byte_source.h"

namespace plansight::interop {

class JsonScanner {
 public:
  enum class Kind : std::uint8_t { object, array, string, number, boolean, null };

  explicit JsonScanner(ByteSource& source, std::size_t chunk_bytes = 1 << 20);

  Kind peek();  // kind of the next value; throws at the end of input or on a stray character
  void begin_object();
  bool next_key(std::string_view& key);  // false when the object ends ('}' consumed)
  void begin_array();
  bool next_element();                   // false when the array ends (']' consumed)
  std::string_view read_string();
  std::string_view read_number();        // the validated text of the number
  bool read_bool();
  void read_null();
  void skip_value();                     // any value, validated, nothing kept
  void finish();                         // only whitespace may follow the document

  std::uint64_t offset() const { return base_ + pos_; }
  std::size_t depth() const { return stack_.size(); }
  [[noreturn]] void fail(const std::string& what) const;

  static constexpr std::size_t kMaxDepth = 10'000;

 private:
  bool refill(std::size_t& keep_from);  // keeps [keep_from, end_); false when no more bytes
  int next_char();                      // skips whitespace; -1 at end of input
  void expect(char c);
  std::string_view scan_string(bool decode);
  void decode_escapes(std::size_t begin, std::size_t end);
  void push(char open);
  bool close_or_comma(char close);

  ByteSource& source_;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  std::vector<char> stack_;         // '{' or '['
  std::vector<std::uint8_t> first_;  // per level: no member read yet
  std::string scratch_;              // decoded strings with escapes
  std::string key_copy_;             // a key whose ':' lies beyond the chunk
};

}  // namespace plansight::interop
