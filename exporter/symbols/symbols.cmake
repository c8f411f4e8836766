# Symbolization: kernel (kallsyms), ELF symbol tables, /proc/PID/maps, and the
# symbolizer that ties them together for the exporter.
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kallsyms.c
  ${CMAKE_CURRENT_LIST_DIR}/elf_symbols.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source_direct.c
  ${CMAKE_CURRENT_LIST_DIR}/proc_source_broker.c
  ${CMAKE_CURRENT_LIST_DIR}/stack_cache.c
  ${CMAKE_CURRENT_LIST_DIR}/symbolizer.c
  ${CMAKE_CURRENT_LIST_DIR}/symtab_common.c)

# The tests compile tests/programs/symbols/*.c at run time with cc, and read
# /proc/kallsyms, /proc/self/maps and short-lived child processes.
