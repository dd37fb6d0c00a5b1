#!/usr/bin/env python3
"""The layer check: every `#include "..."` between the layers of src/ must point down.

The layers (docs/ARCHITECTURE.md, "Layers") are the directories of src/; each is one CMake library
(CMakeLists.txt, TL_LAYERS) that links only the layers below it. This script reads the includes of
every file under src/, prints the include graph between layers (edge: number of include lines) and
fails on

  - an include that points up or sideways (a "wrong-way edge") and is not in ALLOWLIST;
  - an ALLOWLIST entry that no longer occurs (the list only shrinks: delete the entry);
  - a file under src/ outside every known layer (add the directory to LAYERS and to CMakeLists.txt).

With --objects BUILD_DIR it also reads the symbols of the compiled layer libraries (nm over the
objects listed in BUILD_DIR/compile_commands.json) and fails when an object needs a symbol that only
a layer above it defines: the link dependencies, not just the includes, form the DAG (this catches a
function declared by hand instead of through its header).

Run: python3 scripts/check_layers.py [--quiet] [--objects build] (the build runs it without
--objects, target `check_layers`; `make test` runs it with). scripts/arch_counts.py imports it for
the wrong-way edge count.
"""
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# Each layer and the layers it may include directly; what those include is allowed too (the order is
# transitive). Bottom first. `include/tl` is the device/ABI headers of include/ (plain C++ the
# emitted code uses too); every layer may include them.
LAYERS = {
    "include/tl": [],
    "ir": ["include/tl"],
    "arith": ["ir"],
    "layout": ["arith"],
    "op": ["layout"],
    "transform": ["op"],
    "sim": ["op"],
    "target": ["ir"],  # what all targets share: target description forwarder, C source escaping
    "runtime": ["transform", "target"],
    "target/cpu": ["runtime"],
    "target/cuda": ["runtime", "target/cpu"],  # AOT export prints grid expressions with the cpu C printer
    "target/ascend": ["runtime", "sim"],
    "bindings": ["target/cpu", "target/cuda", "target/ascend"],
}

# Wrong-way includes that exist today, "file -> included header". This list only shrinks: the check
# fails when an entry no longer occurs, so that it is deleted here in the same change.
ALLOWLIST = set()  # empty since the moves of issue 14; keep it so


def layer_of(rel):
    """Layer of a path relative to src/ (or an include/tl header)."""
    parts = rel.split("/")
    if parts[0] == "tl":
        return "include/tl"
    if parts[0] == "target" and len(parts) > 2:
        return "target/" + parts[1]
    return parts[0]


def closure():
    below = {}

    def walk(layer, seen):
        for d in LAYERS[layer]:
            if d not in seen:
                seen.add(d)
                walk(d, seen)
        return seen

    for layer in LAYERS:
        below[layer] = walk(layer, set())
        if layer in below[layer]:
            raise SystemExit(f"check_layers: LAYERS has a cycle through '{layer}'")
    return below


INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def scan():
    """Returns (edges, unknown): edges maps (from, to) -> list of 'file -> header' lines."""
    edges, unknown = {}, []
    for dirpath, _, files in os.walk(SRC):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, SRC).replace(os.sep, "/")
            src_layer = layer_of(rel)
            if src_layer not in LAYERS or src_layer == "include/tl":
                unknown.append(rel)
                continue
            with open(path, encoding="utf-8") as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if "/" not in inc:  # same directory
                        inc = os.path.normpath(os.path.join(os.path.dirname(rel), inc)).replace(os.sep, "/")
                    dst_layer = layer_of(inc)
                    if dst_layer == src_layer:
                        continue
                    edges.setdefault((src_layer, dst_layer), []).append(f"src/{rel} -> {inc}")
    return edges, unknown


def wrong_way(edges):
    """The include lines of edges that do not point down."""
    below = closure()
    bad = []
    for (a, b), lines in sorted(edges.items()):
        if b not in below[a]:
            bad.extend(lines)
    return bad


def symbol_edges(build_dir):
    """Wrong-way symbol uses between layer objects: a list of 'object needs symbol (defined in layer)'."""
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.load(f)
    objects = []
    for c in commands:
        src = os.path.relpath(c["file"], SRC).replace(os.sep, "/")
        if src.startswith("..") or src.startswith("bindings/"):
            continue
        args = shlex.split(c["command"])
        obj = args[args.index("-o") + 1]
        objects.append((layer_of(src), src, os.path.join(c.get("directory", build_dir), obj)))
    defined, needed = {}, []
    for layer, src, obj in objects:
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            if parts[1] == "U":
                needed.append((layer, src, parts[0]))
            elif parts[1] in "TDBRVW":  # defined here (weak/inline definitions count for each user)
                defined.setdefault(parts[0], set()).add(layer)
    below = closure()
    bad = []
    for layer, src, sym in needed:
        where = defined.get(sym, set())
        if where and layer not in where and not (where & below[layer]):
            bad.append(f"src/{src} needs {sym} (defined in {', '.join(sorted(where))})")
    return bad, len(objects)


def main(argv):
    quiet = "--quiet" in argv
    edges, unknown = scan()
    bad = wrong_way(edges)
    below = closure()
    if not quiet:
        print("include graph between layers (edge: include lines; 'WRONG WAY' marks an edge that points up):")
        for (a, b), lines in sorted(edges.items()):
            mark = "" if b in below[a] else "   WRONG WAY"
            print(f"  {a:14} -> {b:14} {len(lines):4}{mark}")
    errors = []
    for rel in unknown:
        errors.append(f"src/{rel}: not in any layer; add its directory to LAYERS in scripts/check_layers.py "
                      "(and a library in CMakeLists.txt)")
    for line in bad:
        if line not in ALLOWLIST:
            errors.append(f"{line}: this include points up the layers (docs/ARCHITECTURE.md, \"Layers\"); "
                          "move the shared piece down or invert the dependency")
    for line in sorted(ALLOWLIST - set(bad)):
        errors.append(f"{line}: allowlisted wrong-way include no longer occurs; delete it from ALLOWLIST "
                      "in scripts/check_layers.py")
    if not quiet or errors:
        print(f"wrong-way includes: {len(bad)} ({len(ALLOWLIST)} allowlisted)")
    if "--objects" in argv:
        build_dir = argv[argv.index("--objects") + 1]
        sym_bad, n = symbol_edges(build_dir)
        if not quiet or sym_bad:
            print(f"link dependencies: {n} objects, {len(sym_bad)} wrong-way symbol uses")
        for b in sym_bad:
            errors.append(f"{b}: a layer links a symbol only a higher layer defines; include its header "
                          "from below or move the definition down")
    for e in errors:
        print("check_layers: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
