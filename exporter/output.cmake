# The profile model and its file encoders (pprof, folded, SVG flame graph,
# summary.json) plus the atomic file replacement they are written through.
lowprof_protobuf_c(PPROF_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/pprof.proto)
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/profile.c
  ${CMAKE_CURRENT_SOURCE_DIR}/profile_read.c
  ${CMAKE_CURRENT_SOURCE_DIR}/pprof_writer.c
  ${CMAKE_CURRENT_SOURCE_DIR}/pprof_reader.c
  ${CMAKE_CURRENT_SOURCE_DIR}/folded_writer.c
  ${CMAKE_CURRENT_SOURCE_DIR}/flamegraph_svg.c
  ${CMAKE_CURRENT_SOURCE_DIR}/summary_json.c
  ${CMAKE_CURRENT_SOURCE_DIR}/output_file.c
  ${PPROF_SRCS})
