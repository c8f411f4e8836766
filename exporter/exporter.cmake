# The exporter program's own pieces.
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/exporter_options.c
  ${CMAKE_CURRENT_SOURCE_DIR}/exporter_loop.c
  ${CMAKE_CURRENT_SOURCE_DIR}/exporter_restore.c
  ${CMAKE_CURRENT_SOURCE_DIR}/exporter_state.c
  ${CMAKE_CURRENT_SOURCE_DIR}/otlp_export.c
  ${CMAKE_CURRENT_SOURCE_DIR}/ingest.c
  ${CMAKE_CURRENT_SOURCE_DIR}/outputs.c
  ${CMAKE_CURRENT_SOURCE_DIR}/timeline.c)
target_link_libraries(lowprof_exporter_core PUBLIC lowprof_common)

add_executable(lowprof-exporter ${CMAKE_CURRENT_SOURCE_DIR}/main.c)
target_link_libraries(lowprof-exporter PRIVATE lowprof_exporter_core lowprof_sandbox)
install(TARGETS lowprof-exporter DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/lowprof)
