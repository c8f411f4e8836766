# The exporter program's own pieces: its loop, options, restart state, ingest.
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/exporter_options.c
  ${CMAKE_CURRENT_LIST_DIR}/exporter_loop.c
  ${CMAKE_CURRENT_LIST_DIR}/exporter_restore.c
  ${CMAKE_CURRENT_LIST_DIR}/exporter_state.c
  ${CMAKE_CURRENT_LIST_DIR}/ingest.c)

add_executable(lowprof-exporter ${CMAKE_CURRENT_LIST_DIR}/main.c ${CMAKE_CURRENT_LIST_DIR}/exporter_run.c)
target_link_libraries(lowprof-exporter PRIVATE lowprof_exporter_core lowprof_sandbox)
install(TARGETS lowprof-exporter DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/lowprof)
