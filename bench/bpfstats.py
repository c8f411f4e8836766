"""A lowprof loader's BPF programs and maps, read by bpf(2) from the calling process.

Shared by bench/run, bench/bpf-ab, bench/offcpu, bench/memory and bench/soak. A
snapshot inside a measured window must start no process: lowprof meets every new process (its symbols, its unwind tables) and pays
for it in the window, where perf defers that work to `perf report`. bpftool is used
only where the syscall number is not known (bpftool_json).

    prog_ids(loader_pid) -> the program ids in the loader's /proc/PID/fdinfo
    progs_stats(prog_ids) -> [(name, run_time_ns, run_cnt)] of those still loaded
    maps_memlock(pid) -> {map_id: memlock bytes} of the maps pid holds now
    bpftool_maps() -> {map_id: `bpftool map show -j` entry} (names, types: outside windows)

Python 3 standard library only.
"""

import ctypes
import glob
import json
import os
import struct
import subprocess

SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD = 13, 15
BPF_PROG_INFO_NAME = 64  # offsetof(struct bpf_prog_info, name): uapi, append-only
_LIBC = None


def fdinfo(path):
    """An fdinfo file (/proc/PID/fdinfo/FD) as a dict of its "key: value" lines."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def prog_ids(pid):
    """The ids of the BPF programs pid holds fds of (its /proc/PID/fdinfo)."""
    return {int(fi["prog_id"]) for fi in map(fdinfo, glob.glob(f"/proc/{pid}/fdinfo/*"))
            if "prog_id" in fi}


def _bpf(cmd, attr):
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC.syscall(ctypes.c_long(SYS_BPF), ctypes.c_int(cmd), attr, ctypes.c_uint(len(attr)))


def _fd_by_id(cmd, obj_id):
    """An fd of the BPF object obj_id in this process, or -1 (gone, or no bpf(2))."""
    if SYS_BPF is None:
        return -1
    attr = ctypes.create_string_buffer(16)
    struct.pack_into("I", attr, 0, obj_id)
    return _bpf(cmd, attr)


def bpftool_json(what):
    """`bpftool WHAT show -j` parsed, [] on any failure: the fallback without bpf(2)."""
    try:
        r = subprocess.run(["bpftool", what, "show", "-j"], capture_output=True, text=True,
                           timeout=30)
        return json.loads(r.stdout or "[]") if r.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []


def _prog_stats_bpf(prog_id):
    fd = _fd_by_id(BPF_PROG_GET_FD_BY_ID, prog_id)
    if fd < 0:
        return None
    try:
        info = ctypes.create_string_buffer(256)
        attr = ctypes.create_string_buffer(16)
        struct.pack_into("IIQ", attr, 0, fd, len(info), ctypes.addressof(info))
        name = ""
        if _bpf(BPF_OBJ_GET_INFO_BY_FD, attr) == 0:
            name = info.raw[BPF_PROG_INFO_NAME:BPF_PROG_INFO_NAME + 16].split(b"\0")[0].decode()
        fi = fdinfo(f"/proc/self/fdinfo/{fd}")
        return name, int(fi.get("run_time_ns", 0)), int(fi.get("run_cnt", 0))
    finally:
        os.close(fd)


def progs_stats(prog_ids):
    """[(name, run_time_ns, run_cnt)] of the programs still loaded among prog_ids."""
    if SYS_BPF is None:
        return [(p.get("name"), p.get("run_time_ns", 0), p.get("run_cnt", 0))
                for p in bpftool_json("prog") if p.get("id") in prog_ids]
    return [st for st in (_prog_stats_bpf(i) for i in sorted(prog_ids)) if st is not None]


def maps_memlock(pid):
    """{map_id: memlock bytes} of every distinct BPF map pid holds an fd of: its own
    fdinfo says, no syscall and no bpftool (maps made since, e.g. row chunks, count)."""
    seen = {}
    for path in glob.glob(f"/proc/{pid}/fdinfo/*"):
        fi = fdinfo(path)
        if "map_id" in fi:
            seen[int(fi["map_id"])] = int(fi.get("memlock", 0))
    return seen


def bpftool_maps():
    """{id: `bpftool map show -j` entry} (name, type, max_entries), {} without bpftool."""
    return {m["id"]: m for m in bpftool_json("map") if "id" in m}
