#!/bin/sh
# OTLP with --off-cpu: every --interval an off-CPU request follows the on-CPU
# one, each decoding against the official schema; the off-CPU ones carry one
# profile of sample type off_cpu/nanoseconds, name the sleeper's blocking
# function, and their values add up to summary.json's off-CPU total (the
# window covers the whole run).
#   usage: test_offcpu_otlp.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
have_reference || exit 0
work_dir offcpuotlp
start_sink "$work/sink" 200

# --no-throttle --cpu-budget 100: the switch path stays attached and
# unguarded whatever else loads the host (test_offcpu.sh says why).
"$BIN/lowprof" --duration 30 --interval 2 --off-cpu --no-throttle --cpu-budget 100 \
	--output "$work/out" --run-dir "$work/run" \
	--otlp-endpoint "http://127.0.0.1:$port" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
"$BIN/offcpu_sleeper" 4
sleep 1
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

python3 - "$work/sink" "$REFERENCE_PROTO_DIR" "$work/out/summary.json" "$SRC/tests/otlp" <<'PY' || fail "off-CPU OTLP checks"
import gzip, json, os, re, subprocess, sys
sink, proto, summary, here = sys.argv[1:5]
SERVICE = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
bodies = sorted(int(f[4:-5]) for f in os.listdir(sink) if re.fullmatch(r"req-\d+\.body", f))
on = off = 0
off_ns = 0
texts = []
for n in bodies:
    raw = gzip.decompress(open(os.path.join(sink, "req-%d.body" % n), "rb").read())
    p = subprocess.run(["protoc", "-I", proto, "--decode", SERVICE, PROTO], input=raw,
                       capture_output=True)
    if p.returncode != 0:
        sys.exit("FAIL: req-%d: protoc --decode: %s" % (n, p.stderr.decode()))
    text = p.stdout.decode()
    chk = subprocess.run([sys.executable, os.path.join(here, "check_request.py")], input=text,
                         capture_output=True, text=True)
    if chk.returncode != 0:
        sys.exit("FAIL: req-%d: %s" % (n, chk.stdout))
    if 'string_table: "off_cpu"' in text:
        off += 1
        texts.append(text)
        if len(re.findall(r"^\s*profiles \{", text, re.M)) != 1 or 'string_table: "samples"' in text:
            sys.exit("FAIL: req-%d: an off-CPU request with more than its one profile" % n)
        m = re.search(r"^total nanoseconds (\d+)$", chk.stdout, re.M)
        off_ns += int(m.group(1)) if m else 0
    else:
        on += 1
s = json.load(open(summary))
total = s["off_cpu"]["off_cpu_ns"]
print(f"requests: {on} on-CPU, {off} off-CPU; off-CPU {off_ns} ns in OTLP, {total} ns in the files")
if on == 0 or off == 0:
    sys.exit("FAIL: expected both on-CPU and off-CPU requests")
if not any('"offcpu_sleep_here' in t for t in texts):
    sys.exit("FAIL: offcpu_sleep_here in no off-CPU payload")
if not any('"lowprof.offcpu.probability"' in t for t in texts):
    sys.exit("FAIL: no off-CPU payload carries the probability")
if off_ns != total:
    sys.exit("FAIL: the off-CPU payloads do not add up to the files' off-CPU total")
PY
echo PASS
