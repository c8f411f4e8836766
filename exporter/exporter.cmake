# The exporter program's own pieces.
target_sources(lowprof_exporter_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/exporter_options.c)
target_link_libraries(lowprof_exporter_core PUBLIC lowprof_common)
