#!/usr/bin/env python3
"""Check unwinding in a lowprof output directory (profile.folded) for one comm:
  --chain A;B;C   share of samples whose stack holds the chain, contiguous;
  --root NAME     share whose outermost frames reach NAME (the entry point:
                  NAME is the first or second frame after the comm);
  --truncated-at N  share whose outermost frame is [truncated] with exactly
                  N user frames below it;
  --entry BINARY  share, of the samples that have a user stack, that reach
                  the process's entry point: BINARY's _start, or its dynamic
                  loader's (PT_INTERP; stripped, so named by file offset), or
                  __libc_start_main under them. Not counted: samples with no
                  user frame (at exit) and those marked [in_execve], which
                  must be in execve's kernel path;
then --min / --max bound that share (percent).
  --leaf-prefix P  count only stacks whose innermost user frame starts with P
                   (samples in the program's own code, not its start-up);
  --no-garbage     fail if a stack of the comm holds a frame that names no
                   code ([unknown], [heap]..., [stack]..., a bare address)."""
import argparse
import os
import struct
import sys

from folded_lib import fail, has_chain, read_folded


def is_kernel(frame):
    return frame.endswith("_[k]") or frame.startswith("[k]")


GARBAGE = ("[unknown", "[heap", "[stack", "0x")


def leaf_user(frames):
    """The innermost frame that is not the kernel's ("" when there is none)."""
    user = [x for x in frames if not is_kernel(x)]
    return user[-1] if user else ""


EXEC_KERNEL = ("bprm_execve", "do_execveat_common")
ENTRY_NAMES = ("_start", "__libc_start_main", "__libc_start_call_main")


def elf_entry_and_interp(path):
    """(file offset of the entry point, PT_INTERP path or None) of an ELF64 file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        fail(f"{path}: not an ELF64 file")
    entry, phoff = struct.unpack_from("<QQ", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    off, interp = None, None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= entry < p_vaddr + p_filesz:
            off = entry - p_vaddr + p_offset
        if p_type == 3:
            interp = data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode()
    return off, interp


def entry_frames(binary):
    """Frame names an outermost frame at the process's entry takes."""
    _, interp = elf_entry_and_interp(binary)
    if interp is None:
        return set(ENTRY_NAMES), None
    real = os.path.realpath(interp)
    off, _ = elf_entry_and_interp(real)
    base = os.path.basename(interp)
    # Its _start, and the few instructions after it (the call to _dl_start
    # and _dl_start_user's call to _dl_init return there), as bench/run counts it.
    names = {f"{b}+0x{o:x}" for b in (base, os.path.basename(real)) for o in range(off, off + 0x30)}
    return set(ENTRY_NAMES) | names, base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--comm", required=True)
    ap.add_argument("--chain")
    ap.add_argument("--root")
    ap.add_argument("--truncated-at", type=int)
    ap.add_argument("--entry")
    ap.add_argument("--min", type=float)
    ap.add_argument("--max", type=float)
    ap.add_argument("--leaf-prefix")
    ap.add_argument("--no-garbage", action="store_true")
    a = ap.parse_args()

    stacks = [(f[1:], c) for f, c in read_folded(os.path.join(a.out, "profile.folded"))
              if f[0] == a.comm]
    if a.no_garbage:
        for f, _ in stacks:
            bad = [x for x in f if x.startswith(GARBAGE)]
            if bad:
                fail(f"a frame that was not on the stack ({bad[0]}): {';'.join(f)[:300]}")
    if a.entry:
        for f, _ in stacks:
            if "[in_execve]" in f and not any(x[:-4].startswith(EXEC_KERNEL) for x in f if x.endswith("_[k]")):
                fail(f"[in_execve] outside execve: {';'.join(f)[:300]}")
        stacks = [(f, c) for f, c in stacks
                  if [x for x in f if not is_kernel(x)] not in ([], ["[in_execve]"])]
    if a.leaf_prefix:
        stacks = [(f, c) for f, c in stacks if leaf_user(f).startswith(a.leaf_prefix)]
    total = sum(c for _, c in stacks)
    if total < 50:
        fail(f"only {total} samples of {a.comm}")
    if a.chain:
        chain = a.chain.split(";")
        what = f"chain {a.chain}"
        ok = sum(c for f, c in stacks if has_chain(f, chain))
    elif a.root:
        what = f"outermost frames reaching {a.root}"
        ok = sum(c for f, c in stacks if a.root in f[:2])
    elif a.entry:
        names, interp = entry_frames(a.entry)
        what = f"samples with a user stack reaching the entry point ({interp or 'static'})"
        ok = sum(c for f, c in stacks
                 if any(x in names for x in [y for y in f if not is_kernel(y)][:2]))
    elif a.truncated_at:
        what = f"[truncated] after exactly {a.truncated_at} user frames"
        ok = sum(c for f, c in stacks
                 if f and f[0] == "[truncated]"
                 and len([x for x in f[1:] if not is_kernel(x)]) == a.truncated_at)
        deeper = [f for f, _ in stacks if f and f[0] != "[truncated]" and len(f) > a.truncated_at]
        if deeper:
            fail(f"a stack deeper than {a.truncated_at} without [truncated]: {';'.join(deeper[0])}")
    else:
        fail("one of --chain, --root, --truncated-at, --entry")
    share = 100.0 * ok / total
    print(f"{a.comm}: {what}: {ok}/{total} samples = {share:.1f}%")
    worst = sorted(((c, f) for f, c in stacks), reverse=True)[:3]
    for c, f in worst:
        print(f"  {c:6d} {';'.join(f)[:200]}")
    if a.min is not None and share < a.min:
        fail(f"{share:.1f}% < {a.min}%")
    if a.max is not None and share > a.max:
        fail(f"{share:.1f}% > {a.max}%")


if __name__ == "__main__":
    main()
