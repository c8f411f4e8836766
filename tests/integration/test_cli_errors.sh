#!/bin/sh
# The real binary: bad command lines exit 2 with one line on stderr, before
# anything is loaded; --help and --version exit 0.
#   usage: test_cli_errors.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
work_dir cli

expect_usage() {
	want=$1
	shift
	set +e
	"$BIN/lowprof" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "lowprof $* exited $rc, want 2"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "lowprof $*: want one line, got: $(cat "$work/err")"
	grep -q -- "$want" "$work/err" || fail "lowprof $*: '$(cat "$work/err")' lacks '$want'"
	echo "ok: lowprof $* -> $(cat "$work/err")"
}

expect_usage "invalid duration" --duration -1
expect_usage "invalid duration" --duration abc
expect_usage "invalid frequency" -F 0
expect_usage "invalid frequency" -F 100000000
expect_usage "no process with pid" -p 2147483647
expect_usage "cannot create output directory" -o /proc/nonexistent/dir
expect_usage "unknown option" --no-such-option
expect_usage "invalid --ringbuf-kb" --ringbuf-kb 3

# The configuration file: a bad line names FILE:LINE: KEY, before anything runs.
printf '# comment\n\ninterval = 5\ncpu-budget = 500\n' >"$work/bad.conf"
expect_usage "$work/bad.conf:4: cpu-budget: invalid value '500'" --config "$work/bad.conf"
printf 'no-such-key = 1\n' >"$work/unknown.conf"
expect_usage "unknown.conf:1: no-such-key: unknown key" --config "$work/unknown.conf"
expect_usage "No such file" --config "$work/missing.conf"
printf 'interval = 5\nunwind = fp\n' >"$work/good.conf"
"$BIN/lowprof" config check "$work/good.conf" | grep -q ": ok" || fail "config check of a good file"
set +e
"$BIN/lowprof" config check "$work/bad.conf" 2>"$work/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "bad.conf:4: cpu-budget" "$work/err" || fail "config check of a bad file: $rc $(cat "$work/err")"
# The command line wins over the file.
"$BIN/lowprof" config show --config "$work/good.conf" --interval 7 >"$work/show"
grep -qx "interval = 7" "$work/show" && grep -qx "unwind = fp" "$work/show" ||
	fail "config show: $(cat "$work/show")"

"$BIN/lowprof" --help | grep -q -- "--frequency" || fail "--help does not document --frequency"
for opt in --duration --output --frequency --pid --ringbuf-kb --interval --version --config \
	"KEY = VALUE" " cpu-budget " " otlp-endpoint "; do
	"$BIN/lowprof" --help | grep -q -- "$opt" || fail "--help does not document $opt"
done
# Each option's text once: a line of prose twice (punctuation aside) is a
# copy left behind.
dup=$("$BIN/lowprof" --help | tr -d '()[];,.' | sed 's/^ *//; s/ *$//' | grep -v '^$' | sort | uniq -d)
[ -z "$dup" ] || fail "--help repeats: $dup"
# Every option --help lists is in a row of the README's tables of options
# and of commands.
"$BIN/lowprof" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$work/help-options"
grep '^| `-\|^| `lowprof ' "$SRC/README.md" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$work/readme-options"
missing=$(comm -23 "$work/help-options" "$work/readme-options" | tr '\n' ' ')
[ -z "$missing" ] || fail "--help options without a row in README.md's table: $missing"
"$BIN/lowprof" --version | grep -q "^lowprof [0-9]" || fail "--version"
echo PASS
