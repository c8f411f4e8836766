# OTLP profiles export: the encoder (profile model -> ExportProfilesServiceRequest),
# the per-pid metadata it needs, the libcurl delivery client, and the interval
# bookkeeping the exporter's loop drives (otlp_export).
lowprof_protobuf_c(OTLP_PROTO_SRCS ${CMAKE_CURRENT_LIST_DIR}/profiles.proto)
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/process_info.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_encoder.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_encoder_intern.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_encoder_locations.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_encoder_samples.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_client.c
  ${CMAKE_CURRENT_LIST_DIR}/otlp_export.c
  ${OTLP_PROTO_SRCS})
# The settings and their validation on their own: the supervisor checks the
# --otlp-* options with the same code before it starts anything.
add_library(lowprof_otlp_settings STATIC ${CMAKE_CURRENT_LIST_DIR}/otlp_client_settings.c)
target_link_libraries(lowprof_otlp_settings PUBLIC PkgConfig::LIBCURL)
target_link_libraries(lowprof_exporter_core PUBLIC lowprof_otlp_settings PkgConfig::LIBCURL PkgConfig::ZLIB)
