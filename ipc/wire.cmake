# The control-socket wire protocol (lowprof_ctl.proto) and its framing.
lowprof_protobuf_c(LOWPROF_CTL_PROTO_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/lowprof_ctl.proto)
target_sources(lowprof_ipc PRIVATE wire.c ${LOWPROF_CTL_PROTO_SRCS})
