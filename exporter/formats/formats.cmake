# The profile's file encoders (pprof, folded, SVG flame graph, summary.json),
# the pprof reader a restarted exporter reloads with, and the atomic file
# replacement they are all written through.
lowprof_protobuf_c(PPROF_SRCS ${CMAKE_CURRENT_LIST_DIR}/pprof.proto)
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pprof_writer.c
  ${CMAKE_CURRENT_LIST_DIR}/pprof_reader.c
  ${CMAKE_CURRENT_LIST_DIR}/folded_writer.c
  ${CMAKE_CURRENT_LIST_DIR}/flamegraph_svg.c
  ${CMAKE_CURRENT_LIST_DIR}/flamegraph_js.c
  ${CMAKE_CURRENT_LIST_DIR}/summary_json.c
  ${CMAKE_CURRENT_LIST_DIR}/output_file.c
  ${CMAKE_CURRENT_LIST_DIR}/outputs.c
  ${CMAKE_CURRENT_LIST_DIR}/offcpu_outputs.c
  ${CMAKE_CURRENT_LIST_DIR}/archive.c
  ${PPROF_SRCS})
