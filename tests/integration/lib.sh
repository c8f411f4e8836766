# Shared by the integration tests (sourced). Real BPF, real perf events.

# Exit 77 (ctest: skipped) when BPF profiling is impossible here, saying why;
# with LOWPROF_REQUIRE_BPF=1 the same condition is a failure.
require_bpf() {
	why=""
	if [ "$(id -u)" -ne 0 ]; then
		why="not root (needs CAP_BPF and CAP_PERFMON)"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		why="kernel has no BTF (/sys/kernel/btf/vmlinux)"
	fi
	if [ -n "$why" ]; then
		if [ "${LOWPROF_REQUIRE_BPF:-0}" = 1 ]; then
			echo "FAIL: BPF required (LOWPROF_REQUIRE_BPF=1) but $why" >&2
			exit 1
		fi
		echo "SKIP: $why" >&2
		exit 77
	fi
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
