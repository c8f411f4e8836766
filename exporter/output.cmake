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

lowprof_unit_test(test_profile ${CMAKE_SOURCE_DIR}/tests/unit/test_profile.c LIBS lowprof_exporter_core)
lowprof_unit_test(test_pprof_writer ${CMAKE_SOURCE_DIR}/tests/unit/test_pprof_writer.c LIBS lowprof_exporter_core lowprof_test_support)
lowprof_unit_test(test_folded_writer ${CMAKE_SOURCE_DIR}/tests/unit/test_folded_writer.c LIBS lowprof_exporter_core lowprof_test_support)
lowprof_unit_test(test_flamegraph_svg ${CMAKE_SOURCE_DIR}/tests/unit/test_flamegraph_svg.c LIBS lowprof_exporter_core lowprof_test_support)
lowprof_unit_test(test_summary_json ${CMAKE_SOURCE_DIR}/tests/unit/test_summary_json.c LIBS lowprof_exporter_core lowprof_test_support)
