"""What bench/soak and bench/memory read of lowprof's processes: its
components by name and their private memory (the BPF maps they hold:
bench/bpfstats.py).
Python 3 standard library only."""
import glob
import os
import time

COMPONENTS = ["lowprof", "lowprof-loader", "lowprof-controller", "lowprof-exporter",
              "lowprof-unwinder"]


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def children(pid):
    """The supervisor (pid) and its components by name (their exe basename)."""
    out = {}
    for d in glob.glob("/proc/[0-9]*"):
        stat = read(d + "/stat")
        if not stat or int(stat.rsplit(")", 1)[1].split()[1]) != pid:
            continue
        try:
            name = os.path.basename(os.readlink(d + "/exe"))
        except OSError:
            continue
        if name in COMPONENTS:
            out[name] = int(os.path.basename(d))
    out["lowprof"] = pid
    return out


def _shared_mapping(header):
    """True for a mapping counted once for all processes, not in anyone's
    private memory: a BPF map's (anon_inode:bpf-map: the loader's mmapped row
    chunks and ring buffer pages, counted as maps) or a memfd lowprof shares
    between processes (/memfd:lowprof-...: the loader-exporter ring and the
    unwind tables in transit, counted by memfd_kib). smaps calls a shared
    page "private" while only one process has it mapped, so a ring whose
    writer restarted would read as the reader's private memory until the new
    writer had touched it all."""
    h = header.rstrip()
    return h.endswith("anon_inode:bpf-map") or "/memfd:lowprof-" in h


def private_kib(pid):
    """(Private_Dirty, Private_Clean) in KiB from /proc/PID/smaps, without the
    shared mappings of _shared_mapping. Dirty is the heap and other anonymous
    memory; clean mostly file pages only this process maps, which the kernel
    can drop."""
    dirty = clean = 0
    shared = False
    for line in read("/proc/%d/smaps" % pid).splitlines():
        first = line.split(" ", 1)[0]
        if "-" in first and ":" not in first:
            shared = _shared_mapping(line)
        elif shared:
            continue
        elif line.startswith("Private_Dirty:"):
            dirty += int(line.split()[1])
        elif line.startswith("Private_Clean:"):
            clean += int(line.split()[1])
    return dirty, clean


def memfd_kib(pids):
    """KiB resident in lowprof's memfds mapped by pids, each memfd once (by
    inode, the most any one process has resident)."""
    seen = {}
    for pid in pids:
        mine, key = {}, None
        for line in read("/proc/%d/smaps" % pid).splitlines():
            f = line.split()
            if f and "-" in f[0] and ":" not in f[0]:
                key = f[4] if len(f) > 5 and "/memfd:lowprof-" in line else None
            elif key is not None and f and f[0] == "Rss:":
                mine[key] = mine.get(key, 0) + int(f[1])
        for key, kib in mine.items():
            seen[key] = max(seen.get(key, 0), kib)
    return sum(seen.values())


def paced_churn(child, rate, seconds):
    """A forked spawner starting child rate times a second for seconds; its pid."""
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        os.setsid()
        start = time.monotonic()
        n = 0
        live = 0
        while time.monotonic() - start < seconds:
            os.posix_spawn(child, [child], os.environ)
            live += 1
            n += 1
            while live > 0:
                try:
                    p, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    live = 0
                    break
                if p == 0:
                    break
                live -= 1
            time.sleep(max(0.0, start + n / rate - time.monotonic()))
    finally:
        os._exit(0)
