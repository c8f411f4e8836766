# The Debian package: `cpack -G DEB` in the build directory writes
# lowprof_VERSION_ARCH.deb with the programs (/usr/bin, /usr/libexec/lowprof),
# the systemd unit, the default configuration (a conffile) and the docs. The
# maintainer scripts (deploy/debian/) create the lowprof system user and
# /var/lib/lowprof; a purge removes them. Depends is computed from the
# libraries the programs link (dpkg-shlibdeps).

# The unit as installed: the package's lowprof is in /usr/bin.
file(READ ${CMAKE_SOURCE_DIR}/deploy/lowprof.service LOWPROF_UNIT)
string(REPLACE "/usr/local/bin/lowprof" "/usr/bin/lowprof" LOWPROF_UNIT "${LOWPROF_UNIT}")
string(REPLACE "file:///usr/local/share/doc/lowprof/" "file:///usr/share/doc/lowprof/" LOWPROF_UNIT
       "${LOWPROF_UNIT}")
file(WRITE ${CMAKE_BINARY_DIR}/deploy/lowprof.service "${LOWPROF_UNIT}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/deploy/lowprof.service)

# The unit and the configuration have absolute destinations: `cmake --install`
# under any prefix puts them where systemd and lowprof look.
install(FILES ${CMAKE_BINARY_DIR}/deploy/lowprof.service DESTINATION /lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/lowprof.conf DESTINATION /etc/lowprof
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/SECURITY.md
              ${CMAKE_SOURCE_DIR}/docs/SUPERVISION.md ${CMAKE_SOURCE_DIR}/docs/THROTTLE.md
              ${CMAKE_SOURCE_DIR}/docs/OTLP.md ${CMAKE_SOURCE_DIR}/docs/UNWINDING.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/lowprof)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME lowprof)
set(CPACK_PACKAGE_VENDOR "lowprof")
set(CPACK_PACKAGE_CONTACT "lowprof maintainers <lowprof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "continuous CPU profiler on eBPF within a CPU budget")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "lowprof samples the user and kernel stacks of every \
process with perf events and BPF, unwinds user stacks from .eh_frame in BPF, and writes a \
flame graph, pprof and folded stacks, or sends OTLP profiles, without ever costing the host \
more than its CPU budget.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is not linked but loaded by the exporter when it sends OTLP
# (exporter/otlp/curl_lib.h), so dpkg-shlibdeps cannot see it: named here.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libcurl4 (>= 7.85)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/deploy/debian/postinst ${CMAKE_SOURCE_DIR}/deploy/debian/prerm
    ${CMAKE_SOURCE_DIR}/deploy/debian/postrm ${CMAKE_SOURCE_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
