# The shared-memory sample ring (loader -> exporter) and its unit tests.
target_sources(lowprof_ipc PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/shm_ring.c)
lowprof_unit_test(test_shm_ring ${CMAKE_SOURCE_DIR}/tests/unit/test_shm_ring.c LIBS lowprof_ipc)
