# plansight_embed_text(TARGET <t> OUTPUT_NAME <n> FILES <a.json> ...)
# Turns text assets into a C++ source defining
#   std::string_view plansight::assets::embedded_file(std::string_view file_name)
# (empty when unknown), so programs find their presets without any install path.
# The generated source is rebuilt when an asset changes.
function(plansight_embed_text)
  cmake_parse_arguments(ARG "" "TARGET;OUTPUT_NAME" "FILES" ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${ARG_OUTPUT_NAME}.cpp")
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${ARG_OUTPUT_NAME}.cmake")
  set(body "set(content \"// Generated from assets/ by PlansightEmbed.cmake; do not edit.\\n#include <string_view>\\nnamespace plansight::assets {\\nnamespace {\\n\")\n")
  set(lookup "")
  set(deps "")
  foreach(f IN LISTS ARG_FILES)
    get_filename_component(abs "${f}" ABSOLUTE)
    get_filename_component(name "${f}" NAME)
    string(MAKE_C_IDENTIFIER "${name}" id)
    string(APPEND body "file(READ \"${abs}\" text_${id})\n")
    string(APPEND body "string(APPEND content \"constexpr std::string_view k_${id} = R\\\"plansight_asset(\${text_${id}})plansight_asset\\\";\\n\")\n")
    string(APPEND lookup "  if (file_name == \\\"${name}\\\") return k_${id};\\n")
    list(APPEND deps "${abs}")
  endforeach()
  string(APPEND body "string(APPEND content \"}  // namespace\\nstd::string_view embedded_file(std::string_view file_name) {\\n${lookup}  return {};\\n}\\n}  // namespace plansight::assets\\n\")\n")
  string(APPEND body "file(WRITE \"${out}.tmp\" \"\${content}\")\nexecute_process(COMMAND \${CMAKE_COMMAND} -E copy_if_different \"${out}.tmp\" \"${out}\")\n")
  file(WRITE "${script}" "${body}")
  add_custom_command(OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -P "${script}"
    DEPENDS ${deps} "${script}"
    COMMENT "Embedding ${ARG_OUTPUT_NAME}")
  target_sources(${ARG_TARGET} PRIVATE "${out}")
endfunction()
