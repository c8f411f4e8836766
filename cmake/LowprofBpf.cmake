# BPF objects: clang -target bpf with CO-RE against a vmlinux.h generated from the
# running kernel's BTF, then a libbpf skeleton made by bpftool.
set(LOWPROF_VMLINUX_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "BTF used to generate vmlinux.h")
if(NOT EXISTS ${LOWPROF_VMLINUX_BTF})
  message(FATAL_ERROR "${LOWPROF_VMLINUX_BTF} not found: lowprof needs a kernel built with CONFIG_DEBUG_INFO_BTF=y")
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(LOWPROF_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(LOWPROF_BPF_ARCH arm64)
else()
  message(FATAL_ERROR "unsupported architecture for the BPF program: ${CMAKE_SYSTEM_PROCESSOR}")
endif()

set(LOWPROF_VMLINUX_H ${CMAKE_BINARY_DIR}/generated/bpf/vmlinux.h)
# Custom command outputs are visible only in the directory that declares them,
# so bpf/CMakeLists.txt calls this before lowprof_bpf_skeleton().
macro(lowprof_bpf_vmlinux_rule)
add_custom_command(
  OUTPUT ${LOWPROF_VMLINUX_H}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated/bpf
  COMMAND ${BPFTOOL_EXECUTABLE} btf dump file ${LOWPROF_VMLINUX_BTF} format c > ${LOWPROF_VMLINUX_H}.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${LOWPROF_VMLINUX_H}.tmp ${LOWPROF_VMLINUX_H}
  COMMENT "bpftool: vmlinux.h from ${LOWPROF_VMLINUX_BTF}")
endmacro()

# lowprof_bpf_skeleton(name src.bpf.c [headers...]) -> target ${name}_skel providing
# ${CMAKE_BINARY_DIR}/generated/bpf/${name}.skel.h
function(lowprof_bpf_skeleton name src)
  get_filename_component(abs ${src} ABSOLUTE)
  set(obj ${CMAKE_BINARY_DIR}/generated/bpf/${name}.bpf.o)
  set(skel ${CMAKE_BINARY_DIR}/generated/bpf/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CLANG_EXECUTABLE} -g -O2 -Wall -target bpf -D__TARGET_ARCH_${LOWPROF_BPF_ARCH}
            -I${CMAKE_BINARY_DIR}/generated/bpf -I${CMAKE_SOURCE_DIR}
            -Wno-gnu-variable-sized-type-not-at-end -c ${abs} -o ${obj}
    DEPENDS ${abs} ${LOWPROF_VMLINUX_H} ${ARGN}
    COMMENT "clang -target bpf ${name}.bpf.c")
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL_EXECUTABLE} gen skeleton ${obj} name ${name}_bpf > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "bpftool gen skeleton ${name}")
  add_custom_target(${name}_skel DEPENDS ${skel})
endfunction()
