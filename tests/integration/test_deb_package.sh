#!/bin/sh
# The Debian package on this machine: `cpack -G DEB` builds it, dpkg -i
# installs it (the lowprof, lowprof-controller and lowprof-unwinder users,
# /var/lib/lowprof, the conffile), the
# installed lowprof answers --version and profiles a few seconds the way the
# packaged unit starts it (its helpers found in /usr/libexec/lowprof), and
# dpkg --purge leaves nothing behind: no user, group, directory or file.
# The unit runs the exporter, the controller and the unwinder each as its own user.
#   usage: test_deb_package.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
for tool in dpkg dpkg-deb dpkg-shlibdeps cpack; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed (apt-get install dpkg-dev cmake)" >&2
		exit 77
	fi
done
require_bpf
BUILD=$(cd "$BIN/.." && pwd)
work_dir deb
if dpkg-query -W lowprof >/dev/null 2>&1; then
	fail "a lowprof package is already installed here: not touching it (dpkg --purge lowprof first)"
fi
[ ! -e /usr/bin/lowprof ] || fail "/usr/bin/lowprof exists outside any package: not overwriting it"
# Whatever happens below, the machine is left as it was.
on_exit 'dpkg-query -W lowprof >/dev/null 2>&1 && dpkg --purge lowprof >/dev/null 2>&1'

(cd "$BUILD" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) ||
	fail "cpack: $(tail -5 "$work/cpack.log")"
deb=$(ls "$work"/pkg/lowprof_*.deb)
dpkg-deb -f "$deb" Depends | grep -q "libbpf1" || fail "Depends lacks the libraries: $(dpkg-deb -f "$deb" Depends)"
# The exporter loads libcurl for OTLP (dlopen): no shared-library dependency shows it.
dpkg-deb -f "$deb" Depends | grep -q "libcurl4" || fail "Depends lacks libcurl4: $(dpkg-deb -f "$deb" Depends)"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$work/dpkg.log")"
echo "ok: installed $(basename "$deb") (Depends: $(dpkg-deb -f "$deb" Depends))"

for u in lowprof lowprof-controller lowprof-unwinder; do
	getent passwd "$u" >/dev/null || fail "no $u user after install"
done
[ "$(stat -c %U:%G "/var/lib/lowprof")" = root:lowprof ] || fail "/var/lib/lowprof: $(stat -c %U:%G /var/lib/lowprof)"
dpkg-query -W -f='${Conffiles}' lowprof | grep -q /etc/lowprof/lowprof.conf ||
	fail "/etc/lowprof/lowprof.conf is not a conffile"
/usr/bin/lowprof --version | grep -q "^lowprof [0-9]" || fail "lowprof --version"
/usr/bin/lowprof config check /etc/lowprof/lowprof.conf >/dev/null || fail "the packaged configuration is invalid"
/usr/bin/lowprof --help | grep -q "cpu-budget" || fail "--help lists no configuration keys"
echo "ok: $(/usr/bin/lowprof --version), user lowprof, /var/lib/lowprof, conffile"

# The unit's command line, as systemd would run it, for a few seconds.
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/lowprof.service)
case "$exec_start" in
/usr/bin/lowprof\ *) ;;
*) fail "the packaged unit starts '$exec_start', not /usr/bin/lowprof" ;;
esac
busy_cpu 20
# shellcheck disable=SC2086 # the unit's words
$exec_start --duration 4 --interval 2 --run-dir "$work/run" 2>"$work/stderr" &
sup=$!
wait_profiling "$work/stderr"
users=""
for c in lowprof-exporter lowprof-controller lowprof-unwinder; do
	users="$users $c=$(ps -o user= -p "$(child_pid "$c")" | tr -d ' ')"
done
wait "$sup" || fail "the packaged lowprof exited $?: $(cat "$work/stderr")"
[ "$users" = " lowprof-exporter=lowprof lowprof-controller=lowprof-controller lowprof-unwinder=lowprof-unwinder" ] ||
	fail "the components ran as:$users"
echo "ok: one user per component:$users"
[ -s /var/lib/lowprof/profile.pb.gz ] && [ -s /var/lib/lowprof/flamegraph.svg ] ||
	fail "no profile in /var/lib/lowprof: $(ls -l /var/lib/lowprof)"
n=$(json_value /var/lib/lowprof/summary.json samples)
[ "$n" -gt 0 ] || fail "no samples from the packaged lowprof"
echo "ok: '$exec_start' profiled $n samples into /var/lib/lowprof"

dpkg --purge lowprof >"$work/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$work/purge.log")"
left=""
for u in lowprof lowprof-controller lowprof-unwinder; do
	getent passwd "$u" >/dev/null && left="$left user:$u"
	getent group "$u" >/dev/null && left="$left group:$u"
done
for p in /var/lib/lowprof /etc/lowprof /run/lowprof /usr/libexec/lowprof /usr/share/doc/lowprof \
	/usr/bin/lowprof /lib/systemd/system/lowprof.service; do
	[ ! -e "$p" ] || left="$left $p"
done
dpkg-query -W lowprof >/dev/null 2>&1 && left="$left dpkg-entry"
[ -z "$left" ] || fail "left after purge:$left"
echo "ok: purge left nothing"
echo PASS
