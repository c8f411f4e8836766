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
# The settings and their validation are in settings/ (the supervisor checks the
# --otlp-* options with the same code, without libcurl).
target_link_libraries(lowprof_exporter_core PUBLIC lowprof_settings PkgConfig::LIBCURL PkgConfig::ZLIB)
