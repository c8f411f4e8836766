# Shared by the unwinding integration tests (sourced after lib.sh).

# unwind_lowprof MODE ARGS...: run lowprof with --unwind MODE (and
# --no-throttle, so that a busy test host does not switch the mode). Until
# the supervisor passes --unwind on, a private copy of lowprof runs a
# wrapped loader that adds it (the supervisor finds its components next
# to its own executable). Needs $BIN and $work.
unwind_lowprof() {
	mode=$1
	shift
	if "$BIN/lowprof" --help 2>&1 | grep -q -- '--unwind'; then
		"$BIN/lowprof" --unwind "$mode" --no-throttle "$@"
		return
	fi
	d="$work/bin-$mode"
	mkdir -p "$d"
	cp "$BIN/lowprof" "$d/lowprof"
	for p in lowprof-exporter lowprof-controller lowprof-unwinder; do
		[ -e "$BIN/$p" ] && ln -sf "$BIN/$p" "$d/$p"
	done
	printf '#!/bin/sh\nexec "%s/lowprof-loader" "$@" --unwind=%s\n' "$BIN" "$mode" >"$d/lowprof-loader"
	chmod +x "$d/lowprof-loader"
	"$d/lowprof" --no-throttle "$@"
}

# wait_profiling FILE: until lowprof says it samples (at most 20 s).
wait_profiling() {
	i=0
	while ! grep -q "profiling" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "lowprof did not start: $(cat "$1")"
		sleep 0.1
	done
}
