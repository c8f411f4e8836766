#!/usr/bin/env python3
"""Prints what an OTLP sink received about the processes of one name.

    process_attributes.py SINK_DIR PROTO_DIR THREAD_NAME

For every request body (req-N.body) the samples whose thread.name is
THREAD_NAME: one line per process and path, "PID EXECUTABLE_PATH" ("-"
when the samples carry no process.executable.path; only for a pid none of
whose samples carries one). A pid is on two lines when its samples carry
two paths (it exec'd, or it was reused). Exits 1 when no sample has the
name.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_otlp_pprof import decode  # noqa: E402


def samples_attributes(text):
    """Each distinct attribute set the samples point to, as a dict."""
    strings = re.findall(r'string_table: "(.*)"', text)
    table = []
    for block in re.findall(r"attribute_table \{(.*?)\n  \}", text, re.S):
        key = re.search(r"key_strindex: (\d+)", block)
        value = re.search(r"\w+_value: (.*)", block)
        table.append((strings[int(key.group(1))] if key else strings[0],
                      value.group(1).strip('"') if value else None))
    sets = set()
    for sample in re.findall(r"samples \{(.*?)\n      \}", text, re.S):
        sets.add(tuple(int(i) for i in re.findall(r"attribute_indices: (\d+)", sample)))
    return [dict(table[i] for i in s if i < len(table)) for s in sets]


def main():
    sink, proto_dir, name = sys.argv[1:4]
    procs = {}
    for body in sorted(f for f in os.listdir(sink) if f.endswith(".body")):
        with open(os.path.join(sink, body), "rb") as f:
            text = decode(proto_dir, f.read())
        for a in samples_attributes(text):
            if a.get("thread.name") == name:
                pid = a.get("process.pid")
                path = a.get("process.executable.path")
                procs.setdefault(pid, set()).add(path or "-")
    for pid, paths in sorted(procs.items()):
        if len(paths) > 1:
            paths.discard("-")
        for path in sorted(paths):
            print(pid, path)
    return 0 if procs else 1


if __name__ == "__main__":
    sys.exit(main())
