# Build hardening for every target, and the optional sanitizer build.
#
# Always: PIE, full RELRO (-z relro -z now: the GOT is read-only before main),
# stack-clash protection, and the stack protector and _FORTIFY_SOURCE set in
# the top CMakeLists.txt.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
include(CheckPIESupported)
check_pie_supported()
add_compile_options(-fstack-clash-protection)
add_link_options(-Wl,-z,relro -Wl,-z,now)

# -DLOWPROF_SANITIZE=ON: AddressSanitizer + UndefinedBehaviorSanitizer on
# everything (clang; `ctest -L unit` then runs the unit tests under them).
# UBSan findings abort, so a test cannot pass over one.
option(LOWPROF_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(LOWPROF_SANITIZE)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LOWPROF_SANITIZE needs clang: configure with CC=clang")
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # For the few places that must know (LeakSanitizer before a seccomp filter,
  # time bounds of scale tests under a 3-5x slowdown).
  add_compile_definitions(LOWPROF_SANITIZE=1)
  # _FORTIFY_SOURCE and ASan check the same accesses; ASan's reports are the useful ones.
  add_compile_options(-U_FORTIFY_SOURCE)
endif()

# -DLOWPROF_FUZZ=ON: the libFuzzer harnesses in fuzz/ (clang).
option(LOWPROF_FUZZ "Build the libFuzzer harnesses in fuzz/" OFF)
if(LOWPROF_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "LOWPROF_FUZZ needs clang: configure with CC=clang")
  endif()
  # Coverage instrumentation in the libraries the harnesses link, without
  # libFuzzer's main (the programs and unit tests keep their own).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
