# cmake -DINPUT=<text> -DOUTPUT=<cpp> -P embed_corpus.cmake
# Writes plansight::probe::corpus_text() returning the file's bytes, as a byte array (a string
# literal of 150 KB would exceed the 64 KB ISO C++ guarantees and warn under -Wpedantic).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR bytes "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" body "${body}")
file(WRITE "${OUTPUT}.tmp"
"// Generated from assets/corpus by probe/src/embed_corpus.cmake; do not edit.
#include <string_view>
namespace plansight::probe {
namespace {
constexpr unsigned char kCorpus[] = {
${body}
};
}  // namespace
std::string_view corpus_text() { return {reinterpret_cast<const char*>(kCorpus), ${bytes}}; }
}  // namespace plansight::probe
")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
