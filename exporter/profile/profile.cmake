# The profile model (stacks, frames, interned strings), its read side for the
# encoders, and the throttle's timeline the loader reports.
target_sources(lowprof_exporter_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/profile.c
  ${CMAKE_CURRENT_LIST_DIR}/profile_read.c
  ${CMAKE_CURRENT_LIST_DIR}/profile_window.c
  ${CMAKE_CURRENT_LIST_DIR}/timeline.c)
