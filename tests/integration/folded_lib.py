"""Helpers for the integration checks that read a lowprof profile.folded."""
import sys


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def read_folded(path):
    """[(frames root first, with the comm as frames[0], count)]; a malformed line fails."""
    stacks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                fail(f"malformed folded line: {line!r}")
            stacks.append((stack.split(";"), int(count)))
    return stacks


def has_chain(frames, chain):
    """chain appears as a contiguous run of frames, root to leaf."""
    n = len(chain)
    return any(frames[i:i + n] == chain for i in range(len(frames) - n + 1))
