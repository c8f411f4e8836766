# Every library is found with pkg-config; a missing one stops the build with the
# Debian package that provides it (scripts/install-deps installs them all).
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: install the Debian package 'pkg-config'")
endif()

function(lowprof_require_pkg var module debian_pkg)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found: install the Debian package '${debian_pkg}' (or run scripts/install-deps)")
  endif()
endfunction()

lowprof_require_pkg(LIBBPF     libbpf        libbpf-dev)
lowprof_require_pkg(LIBELF     libelf        libelf-dev)
lowprof_require_pkg(LIBCAP     libcap        libcap-dev)
lowprof_require_pkg(LIBSECCOMP libseccomp    libseccomp-dev)
lowprof_require_pkg(PROTOBUFC  libprotobuf-c libprotobuf-c-dev)
lowprof_require_pkg(LIBCURL    libcurl       libcurl4-openssl-dev)
lowprof_require_pkg(ZLIB       zlib          zlib1g-dev)
lowprof_require_pkg(CMOCKA     cmocka        libcmocka-dev)

function(lowprof_require_program var name debian_pkg)
  find_program(${var} ${name} PATHS /usr/sbin /sbin)
  if(NOT ${var})
    message(FATAL_ERROR "${name} not found: install the Debian package '${debian_pkg}' (or run scripts/install-deps)")
  endif()
endfunction()

lowprof_require_program(PROTOC_C_EXECUTABLE protoc-c protobuf-c-compiler)
lowprof_require_program(CLANG_EXECUTABLE    clang    clang)
lowprof_require_program(BPFTOOL_EXECUTABLE  bpftool  bpftool)

# protobuf-c code generation: lowprof_protobuf_c(OUT_VAR dir/file.proto ...)
# puts file.pb-c.c/.h under the build tree at the same relative path.
function(lowprof_protobuf_c out_var)
  set(generated)
  foreach(proto ${ARGN})
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${abs})
    get_filename_component(rel_dir ${rel} DIRECTORY)
    get_filename_component(name_we ${proto} NAME_WE)
    set(out_c ${CMAKE_BINARY_DIR}/generated/${rel_dir}/${name_we}.pb-c.c)
    set(out_h ${CMAKE_BINARY_DIR}/generated/${rel_dir}/${name_we}.pb-c.h)
    add_custom_command(
      OUTPUT ${out_c} ${out_h}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated
      COMMAND ${PROTOC_C_EXECUTABLE} --c_out=${CMAKE_BINARY_DIR}/generated -I${CMAKE_SOURCE_DIR} ${abs}
      DEPENDS ${abs}
      COMMENT "protoc-c ${rel}")
    list(APPEND generated ${out_c} ${out_h})
  endforeach()
  set(${out_var} ${generated} PARENT_SCOPE)
endfunction()
