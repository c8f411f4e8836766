# The official protobuf schemas (opentelemetry/, pprof/) that tests decode
# lowprof's outputs against. They are not part of the repository: by default
# the shared/reference/proto folder beside the checkout. Unit tests get it as a
# compile definition and integration scripts as an argument; at test time the
# environment variable of the same name overrides both. Where it is missing,
# the schema checks are skipped saying so (failed with LOWPROF_REQUIRE_REFERENCE=1).
get_filename_component(_lowprof_reference_default
  "${CMAKE_SOURCE_DIR}/../shared/reference/proto" ABSOLUTE)
set(LOWPROF_REFERENCE_PROTO_DIR "${_lowprof_reference_default}" CACHE PATH
  "Folder of the official protobuf schemas (opentelemetry/, pprof/) the tests decode against")
# The normalised path (no "..") in a normal variable that shadows the cache entry.
get_filename_component(LOWPROF_REFERENCE_PROTO_DIR "${LOWPROF_REFERENCE_PROTO_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${LOWPROF_REFERENCE_PROTO_DIR}")
  message(STATUS "Reference schemas not found at ${LOWPROF_REFERENCE_PROTO_DIR}: the tests' "
                 "schema checks will be skipped (set LOWPROF_REFERENCE_PROTO_DIR)")
endif()

# lowprof_unit_test(NAME source.c LIBS lib...) : a cmocka unit test run by ctest.
function(lowprof_unit_test name src)
  cmake_parse_arguments(T "" "" "LIBS" ${ARGN})
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_compile_definitions(${name} PRIVATE
    LOWPROF_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    LOWPROF_BINARY_DIR="${CMAKE_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120)
endfunction()
