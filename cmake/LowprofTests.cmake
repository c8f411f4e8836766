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
