# The symbol-source protocol (lowprof_sym.proto): exporter <-> loader, fds included.
lowprof_protobuf_c(LOWPROF_SYM_PROTO_SRCS ${CMAKE_CURRENT_SOURCE_DIR}/lowprof_sym.proto)
target_sources(lowprof_ipc PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/sym_wire.c ${LOWPROF_SYM_PROTO_SRCS})
