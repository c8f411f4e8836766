#!/bin/sh
# No process can choose the table another process's dynamic loader is
# unwound with and named by (docs/SECURITY.md, "The dynamic loader is named
# from the process's own memory"). The walker finds a dynamic loader by the
# hash of the ELF header mapped at AT_BASE, so a file whose header is ld.so's
# could stand for every process's ld.so. The attack, as an unprivileged user
# (nobody): a copy of the host's dynamic loader, byte for byte but for its
# build id (so no debug file names it: its frames read COPY+0x...), mapped
# executable away from AT_BASE and run, so that the walker finds it by its
# VMA and the loader builds its table (audit.log shows it did). A victim
# (root) then spends its time in ld.so's symbol lookup: none of its frames
# may come from the copy, and its ld.so frames are there, from the real file.
#   usage: test_security_interp.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir interp
chmod 755 "$work"
mkdir "$work/evil"
# The host's dynamic loader, as the test program names it (PT_INTERP).
python3 - "$BIN/interp_spin" "$work/evil/ld-copy.so" <<'PY' || fail "could not make the copy"
import struct, sys

def load(path):
    with open(path, "rb") as f:
        return bytearray(f.read())

def segments(data):
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        yield struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)

prog = load(sys.argv[1])
interp = [bytes(prog[off:off + size]).rstrip(b"\0").decode()
          for typ, _, off, _, _, size in segments(prog) if typ == 3]  # PT_INTERP
if not interp:
    sys.exit("interp_spin has no PT_INTERP")
ld = load(interp[0])
flipped = 0
for typ, _, off, _, _, size in segments(ld):
    if typ != 4:  # PT_NOTE
        continue
    o = off
    while o + 12 <= off + size:
        namesz, descsz, ntype = struct.unpack_from("<III", ld, o)
        desc = o + 12 + ((namesz + 3) & ~3)
        if ntype == 3 and ld[o + 12:o + 12 + namesz] == b"GNU\0":  # NT_GNU_BUILD_ID
            for j in range(desc, desc + descsz):
                ld[j] ^= 0xFF
            flipped += 1
        o = desc + ((descsz + 3) & ~3)
if flipped == 0:
    sys.exit(f"{interp[0]} has no build id")
with open(sys.argv[2], "wb") as f:
    f.write(ld)
print(f"copy of {interp[0]}: {sys.argv[2]}, build id changed, header unchanged")
PY
cp "$BIN/interp_spin" "$work/evil/ip_attacker"
chmod 755 "$work/evil/ld-copy.so" "$work/evil/ip_attacker"
chown -R 65534:65534 "$work/evil"

"$BIN/lowprof" --unwind dwarf --no-throttle --cpu-budget 100 --duration 10 --frequency 199 \
	--output "$work/out" 2>"$work/err" &
lp=$!
track "$lp"
wait_profiling "$work/err"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$work/evil/ip_attacker" map 8 "$work/evil/ld-copy.so" &
track $!
# The copy's table is built within a control interval of its first sample.
sleep 2.5
"$BIN/interp_spin" lookup 4 || fail "the victim failed"
wait "$lp" || fail "lowprof failed: $(cat "$work/err")"

python3 - "$SRC/tests/integration" "$work/out" "$work/evil/ld-copy.so" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
from folded_lib import fail, read_folded

out, copy = sys.argv[2], sys.argv[3]
copy_name = os.path.basename(copy)

# The attack was mounted: the loader built the copy's table.
tabled = False
with open(os.path.join(out, "audit.log"), encoding="utf-8") as f:
    for line in f:
        rec = json.loads(line)
        if rec.get("map") == "unwind_rows" and rec.get("file") == copy and rec.get("result") == "ok":
            tabled = True
if not tabled:
    fail(f"no table of {copy} in audit.log: the attack never got that far, the test proves nothing")

victim = attacker = from_copy = in_ld = 0
for frames, count in read_folded(os.path.join(out, "profile.folded")):
    if frames[0] == "ip_attacker":
        attacker += count
    if frames[0] != "interp_spin":
        continue
    victim += count
    if any(copy_name in f for f in frames):
        from_copy += count
        print(f"  {count:5d} {';'.join(frames)[:240]}")
    # ld.so's symbol lookup, named from the real file (its debug file, or
    # its name and an offset when there is none).
    if any(f.startswith("_dl_lookup_symbol_x") or f.startswith("ld-linux") for f in frames):
        in_ld += count
print(f"attacker samples {attacker}; victim samples {victim}, in ld.so's lookup {in_ld}, "
      f"with a frame of the copy {from_copy}")
if attacker < 30:
    fail(f"only {attacker} samples of the attacker")
if victim < 100:
    fail(f"only {victim} samples of the victim")
if from_copy:
    fail(f"{from_copy} of the victim's samples were unwound and named with the attacker's file")
if in_ld < victim * 0.3:
    fail(f"only {in_ld} of the victim's {victim} samples are in ld.so's lookup")
PY
echo "PASS: another user's copy of ld.so never unwinds or names a victim's ld.so frames"
