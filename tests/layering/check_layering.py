#!/usr/bin/env python3
"""The layering check: every #include "..." in the project's C sources and
headers must follow the rules of the layers table in docs/ARCHITECTURE.md.

    check_layering.py [SOURCE_DIR]     check the tree (default: this checkout)
    check_layering.py --self-test      check the check on small made-up trees

The rules live only in that table (between the "layers table" markers), so the
document cannot drift from what is enforced. A file belongs to the folder that
is the first component of its path (exporter/otlp/x.c is in exporter/); an
include belongs to the first component of the path it names (includes are
written from the repository root). An include without a folder
("lowprof_build_config.h", "vmlinux.h") is the including folder's own or a
generated build-wide header, and is allowed.

A file in folder F may include a header of folder G when G is F, or G's layer
is below F's, or the table lists G in F's "may also include" column. Folders
whose layer is "-" (tests/, bench/) are not checked. A folder with C files
that the table does not name, or an include of a folder it does not name, is
a violation too: a new folder needs its row first.

Exit status: 0 clean, 1 violations (each listed), 2 the table is unreadable.
"""
import os
import re
import shutil
import sys
import tempfile

TABLE_START = "<!-- layers table: read by tests/layering/check_layering.py -->"
TABLE_END = "<!-- end of layers table -->"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
C_FILE = re.compile(r"\.(c|h)$")


class TableError(Exception):
    pass


def folder_name(cell):
    """`exporter/` or exporter/ -> exporter"""
    name = cell.strip().strip("`").strip().rstrip("/")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise TableError(f"bad folder cell {cell!r}")
    return name


def read_table(doc_path):
    """{folder: (layer or None, {folders it may also include})}"""
    try:
        text = open(doc_path, encoding="utf-8").read()
    except OSError as e:
        raise TableError(f"cannot read {doc_path}: {e}")
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise TableError(f"{doc_path}: no layers table between the markers "
                         f"{TABLE_START!r} and {TABLE_END!r}")
    rules = {}
    header_seen = False
    for line in text[start + len(TABLE_START):end].splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 4:
            raise TableError(f"{doc_path}: a layers table row needs 4 cells: {line!r}")
        if not header_seen:
            if [c.lower() for c in cells[:2]] != ["folder", "layer"]:
                raise TableError(f"{doc_path}: the layers table must start with "
                                 f"| folder | layer | ...: {line!r}")
            header_seen = True
            continue
        if set(cells[0]) <= set("-: "):
            continue  # the |---|---| line
        folder = folder_name(cells[0])
        layer = cells[1].strip("`")
        if layer in ("-", "—"):
            layer = None
        elif layer.isdigit():
            layer = int(layer)
        else:
            raise TableError(f"{doc_path}: layer of {folder}/ is {cells[1]!r}, not a number or -")
        also = set()
        for word in re.split(r"[,\s]+", cells[3]):
            if word and word not in ("-", "—"):
                also.add(folder_name(word))
        if folder in rules:
            raise TableError(f"{doc_path}: {folder}/ has two rows")
        rules[folder] = (layer, also)
    if not rules:
        raise TableError(f"{doc_path}: the layers table has no rows")
    for folder, (_, also) in rules.items():
        for other in also:
            if other not in rules:
                raise TableError(f"{doc_path}: {folder}/ may include {other}/, "
                                 f"which has no row")
    return rules


def source_files(root):
    """(relative path, folder) of every .c and .h, build trees and hidden folders aside."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        keep = []
        for d in sorted(dirnames):
            path = os.path.join(dirpath, d)
            if d.startswith(".") or d.startswith("build") or \
                    os.path.exists(os.path.join(path, "CMakeCache.txt")):
                continue
            keep.append(d)
        dirnames[:] = keep
        if rel == ".":
            continue  # files at the top have no folder: none are C
        folder = rel.split(os.sep)[0]
        for f in sorted(filenames):
            if C_FILE.search(f):
                yield os.path.join(rel, f), folder


def check(root, rules):
    """The list of violations, one line each."""
    bad = []
    for rel, folder in source_files(root):
        if folder not in rules:
            bad.append(f"{rel}: folder {folder}/ has no row in the layers table")
            continue
        layer, also = rules[folder]
        if layer is None:
            continue  # tests/, bench/: may include anything
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1):
                    continue
                target = m.group(1).split("/")[0]
                if target == folder or target in also:
                    continue
                if target not in rules:
                    bad.append(f'{rel}:{n}: includes "{m.group(1)}": folder {target}/ '
                               f"has no row in the layers table")
                    continue
                tlayer = rules[target][0]
                if tlayer is not None and tlayer < layer:
                    continue
                why = "the same layer" if tlayer == layer else \
                    "a layer above" if tlayer is not None else "a folder outside the layers"
                bad.append(f'{rel}:{n}: includes "{m.group(1)}": {folder}/ (layer {layer}) '
                           f"may not include {target}/ ({why}"
                           f"{'' if tlayer is None else ', layer %d' % tlayer})")
    return bad


def run(root):
    doc = os.path.join(root, "docs", "ARCHITECTURE.md")
    try:
        rules = read_table(doc)
    except TableError as e:
        print(f"layering: {e}", file=sys.stderr)
        return 2
    bad = check(root, rules)
    for line in bad:
        print(line)
    if bad:
        print(f"layering: {len(bad)} include(s) break the layers of docs/ARCHITECTURE.md",
              file=sys.stderr)
        return 1
    print("layering: every include follows docs/ARCHITECTURE.md")
    return 0


# ---- self-test ----------------------------------------------------------------

SELF_TEST_DOC = f"""# A made-up tree
{TABLE_START}
| folder | layer | what | may also include |
|---|---|---|---|
| `common/` | 0 | helpers | - |
| `ipc/` | 1 | contracts | - |
| `unwind/` | 2 | library | `seccomp/` |
| `seccomp/` | 2 | library | - |
| `loader/` | 3 | program | - |
| `controller/` | 3 | program | - |
| `tests/` | - | tests | - |
{TABLE_END}
"""

CLEAN_TREE = {
    "common/log.h": "#include <stdio.h>\n",
    "common/log.c": '#include "common/log.h"\n#include "lowprof_build_config.h"\n',
    "ipc/wire.h": '#include "common/log.h"\n',
    "seccomp/sandbox.h": '#include "ipc/wire.h"\n',
    "unwind/table.c": '#include "unwind/table.h"\n#include "seccomp/sandbox.h"\n',
    "unwind/table.h": "",
    "loader/main.c": '#include "common/log.h"\n#include "ipc/wire.h"\n#include "unwind/table.h"\n',
    "loader/sub/x.c": '#include "loader/main.h"\n',
    "controller/main.c": '#include "controller/policy.h"\n',
    "tests/t.c": '#include "loader/main.c"\n#include "controller/main.c"\n',
    "build/gen/x.c": '#include "controller/main.c"\n',
}

# path -> (text, the words each violation reported for it must contain)
VIOLATIONS = {
    "loader/bad.c": ('#include "common/log.h"\n#include "controller/policy.h"\n',
                     ["loader/bad.c:2", "controller/"]),
    "common/notify.c": ('  #  include "ipc/wire.h" /* up a layer */\n',
                        ["common/notify.c:1", "ipc/", "a layer above"]),
    "seccomp/x.c": ('#include "unwind/table.h"\n', ["seccomp/x.c:1", "the same layer"]),
    "newdir/y.c": ("", ["newdir/", "no row"]),
}


def make_tree(files, doc=SELF_TEST_DOC):
    root = tempfile.mkdtemp(prefix="lowprof-layering-")
    files = dict(files)
    if doc is not None:
        files["docs/ARCHITECTURE.md"] = doc
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def self_test():
    failures = []

    def expect(what, cond):
        print(f"{'ok' if cond else 'FAIL'}: {what}")
        if not cond:
            failures.append(what)

    trees = []
    try:
        clean = make_tree(CLEAN_TREE)
        trees.append(clean)
        bad = check(clean, read_table(os.path.join(clean, "docs/ARCHITECTURE.md")))
        expect(f"a clean tree passes (got {bad})", bad == [])

        dirty = make_tree({**CLEAN_TREE, **{k: v[0] for k, v in VIOLATIONS.items()}})
        trees.append(dirty)
        bad = check(dirty, read_table(os.path.join(dirty, "docs/ARCHITECTURE.md")))
        for line in bad:
            print(f"    reported: {line}")
        expect(f"exactly {len(VIOLATIONS)} violations reported", len(bad) == len(VIOLATIONS))
        for rel, (_, words) in VIOLATIONS.items():
            expect(f"{rel} reported", any(all(w in line for w in words) for line in bad))
        expect("the whole run fails (status 1)", run(dirty) == 1)
        expect("the clean run passes (status 0)", run(clean) == 0)

        notable = make_tree(CLEAN_TREE, doc="# no table here\n")
        trees.append(notable)
        expect("a document without the table is an error (status 2)", run(notable) == 2)
        typo = make_tree(CLEAN_TREE, doc=SELF_TEST_DOC.replace("| 2 | library | - |",
                                                               "| two | library | - |"))
        trees.append(typo)
        expect("a layer that is not a number is an error (status 2)", run(typo) == 2)
    finally:
        for t in trees:
            shutil.rmtree(t, ignore_errors=True)
    if failures:
        print(f"layering self-test: {len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("layering self-test: PASS")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else \
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return run(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
