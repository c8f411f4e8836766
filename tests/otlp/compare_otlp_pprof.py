#!/usr/bin/env python3
"""Checks what an OTLP sink received against lowprof's own pprof file.

    compare_otlp_pprof.py SINK_DIR PROTO_DIR PPROF_FILE [--accepted N,M,...]
        [--expect-function NAME]... [--expect-build-id PATH] [--no-pprof]

Every accepted request body (req-N.body, all of them by default) is gunzipped,
decoded with protoc against the official schema, and checked by
check_request.py; the resource must carry host.name, host.arch and os.type,
and the samples process.pid and process.executable.name. The sums of the
sample counts per leaf function over all payloads must equal the pprof
file's (go tool pprof -raw), i.e. the interval payloads add up to the run.
"""
import argparse
import gzip
import os
import re
import subprocess
import sys

SERVICE = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def decode(proto_dir, body):
    raw = gzip.decompress(body)
    p = subprocess.run(["protoc", "-I", proto_dir, "--decode", SERVICE, PROTO], input=raw,
                       capture_output=True, check=False)
    if p.returncode != 0:
        fail("protoc --decode: " + p.stderr.decode(errors="replace"))
    return p.stdout.decode()


def pprof_leaf_counts(path):
    out = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    names, samples, section = {}, [], None
    for line in out.splitlines():
        if line.startswith("Samples:"):
            section = "s"
        elif line.startswith("Locations"):
            section = "l"
        elif line.startswith("Mappings"):
            section = None
        elif section == "s":
            m = re.match(r"\s+(\d+)\s+(\d+):\s+([\d ]+)$", line)
            if m:
                samples.append((int(m.group(1)), int(m.group(3).split()[0])))
        elif section == "l":
            # "ID: 0xADDR M=N name file:line s=N"; a name may hold spaces
            # ("[user stack skipped]"), a marker's file is empty.
            m = re.match(r"\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.+?) \S*:-?\d+ s=-?\d+$", line)
            if m:
                names[int(m.group(1))] = m.group(2)
    totals = {}
    for count, leaf in samples:
        totals[names[leaf]] = totals.get(names[leaf], 0) + count
    return totals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sink")
    ap.add_argument("proto_dir")
    ap.add_argument("pprof")
    ap.add_argument("--accepted")
    ap.add_argument("--expect-function", action="append", default=[])
    ap.add_argument("--expect-build-id")
    ap.add_argument("--no-pprof", action="store_true")
    a = ap.parse_args()
    bodies = sorted(int(f[4:-5]) for f in os.listdir(a.sink) if re.fullmatch(r"req-\d+\.body", f))
    accepted = [int(x) for x in a.accepted.split(",")] if a.accepted else bodies
    if not accepted:
        fail("the sink received nothing")
    otlp, texts = {}, []
    for n in accepted:
        with open(os.path.join(a.sink, "req-%d.headers" % n)) as f:
            hdr = f.read().lower()
        if "content-type: application/x-protobuf" not in hdr or "content-encoding: gzip" not in hdr:
            fail("req-%d: wrong content type or encoding:\n%s" % (n, hdr))
        with open(os.path.join(a.sink, "req-%d.body" % n), "rb") as f:
            text = decode(a.proto_dir, f.read())
        texts.append(text)
        chk = subprocess.run([sys.executable, os.path.join(HERE, "check_request.py")], input=text,
                             capture_output=True, text=True, check=False)
        if chk.returncode != 0:
            fail("req-%d: %s" % (n, chk.stdout))
        for line in chk.stdout.splitlines():
            # "count <leaf function> <n>": the name may hold spaces.
            unit, _, rest = line.partition(" ")
            name, _, n = rest.rpartition(" ")
            if unit == "count" and name and n.isdigit():
                otlp[name] = otlp.get(name, 0) + int(n)
    everything = "\n".join(texts)
    for key in ("host.name", "host.arch", "os.type", "process.pid", "process.executable.name",
                "process.executable.build_id.gnu", "lowprof.throttle.tier",
                "lowprof.sampling.frequency"):
        if '"%s"' % key not in everything:
            fail("no attribute %s in any payload" % key)
    for fn in a.expect_function:
        if '"%s"' % fn not in everything:
            fail("function %s in no payload" % fn)
    if a.expect_build_id:
        out = subprocess.run(["readelf", "-n", a.expect_build_id], capture_output=True, text=True).stdout
        bid = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
        if '"%s"' % bid not in everything:
            fail("build id %s of %s in no payload" % (bid, a.expect_build_id))
    print("otlp payloads: %d, samples per leaf: %s" % (len(accepted), otlp))
    if not a.no_pprof:
        pp = pprof_leaf_counts(a.pprof)
        print("pprof samples per leaf: %s" % pp)
        if pp != otlp:
            fail("OTLP payloads and pprof disagree")


if __name__ == "__main__":
    main()
