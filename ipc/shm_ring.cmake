# The shared-memory sample ring (loader -> exporter) and its unit tests.
target_sources(lowprof_ipc PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/shm_ring.c)
