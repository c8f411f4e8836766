# Symbolization: kernel (kallsyms), ELF symbol tables, /proc/PID/maps, and the
# symbolizer that ties them together for the exporter.
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kallsyms.c
  ${CMAKE_CURRENT_LIST_DIR}/elf_symbols.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source_direct.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source_broker.c
  ${CMAKE_CURRENT_LIST_DIR}/symbolizer.c)

# The tests compile tests/programs/symbols/*.c at run time with cc, and read
# /proc/kallsyms, /proc/self/maps and short-lived child processes.
lowprof_unit_test(test_kallsyms ${CMAKE_SOURCE_DIR}/tests/unit/test_kallsyms.c LIBS lowprof_exporter_core)
lowprof_unit_test(test_elf_symbols ${CMAKE_SOURCE_DIR}/tests/unit/test_elf_symbols.c LIBS lowprof_exporter_core)
lowprof_unit_test(test_proc_maps ${CMAKE_SOURCE_DIR}/tests/unit/test_proc_maps.c LIBS lowprof_exporter_core)
lowprof_unit_test(test_symbolizer ${CMAKE_SOURCE_DIR}/tests/unit/test_symbolizer.c LIBS lowprof_exporter_core)
lowprof_unit_test(test_proc_source_broker ${CMAKE_SOURCE_DIR}/tests/unit/test_proc_source_broker.c LIBS lowprof_exporter_core)
