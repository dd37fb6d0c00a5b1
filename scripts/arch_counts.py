#!/usr/bin/env python3
"""Structure counts of src/ for issue 14 (docs/ARCHITECTURE.md, "Structure counts").

Prints, from the source text (heuristics; each says what it matches):

  op-name comparisons  `== "name"` / `!= "name"` (either side) against a registered tile-op name
                       ("copy", "gemm", ..., any "tile.*"), prefix tests (rfind / starts_with /
                       compare) with a literal that begins a registered name ("tile.", "atomic_"),
                       and registered names in brace lists outside src/op ({"copy", "gemm"}: a set
                       looked up by name), outside the registry (ir/tile_op.cc); per layer
  floor-div rules      lines spelling the integer floor-division sign fix-up
                       (`a % b != 0 && (a < 0) != (b < 0)`, or the floor-mod `r += b` form) and files
                       defining their own floor-division helper, outside the one owner (ir/int_arith.h)
  operator semantics   files that define what a scalar operator computes (a `case BinOp::kMul` that
                       multiplies values rather than building IR or text); the one owner is
                       ir/scalar_ops.h
  evaluators           files that evaluate expressions to values: a switch over expression node kinds
                       (`case ExprKind::kBinary`, or the simulator's compiled `case XOp::kBinary`)
                       in a file that applies scalar operators itself (defines them, or calls the
                       table: `scalar::int_binary` / `float_binary`); constant folding through the
                       evaluator's `eval_binary` (the simplifier) is not an evaluator
  bounds analyses      files that define the interval product of two ranges (a brace list of the four
                       corner products lo*lo, lo*hi, hi*lo, hi*hi): each is a constant-bounds analysis
  kernel bindings      places that bind a kernel's block and thread indices to [0, grid) / [0, threads)
  layout per-kind code lines of layout inference (src/layout/) that tell operators apart (`TileOpKind::`,
                       `is_tile_op(`, `tile_op_kind(`, `tile_op_as<`): an operator's layout rules
                       belong to its class (TileOp::infer_layout), the driver only runs the stages
  wrong-way includes   from scripts/check_layers.py: include lines and layer pairs that point up
  largest files        by lines

Run: python3 scripts/arch_counts.py [--list]  (--list prints every match)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layers  # noqa: E402

ROOT = check_layers.ROOT
SRC = check_layers.SRC
REGISTRY_FILES = {"ir/tile_op.cc", "op/tile_op.cc"}
FLOOR_OWNER = {"ir/int_arith.h"}


def sources():
    for dirpath, _, files in os.walk(SRC):
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, SRC).replace(os.sep, "/")
                with open(path, encoding="utf-8") as f:
                    yield rel, f.read()


# How a registration spells the operator's name: the TileOpDef structs of before issue 14 item 1,
# then the TileOp classes (a name in the constructor's TileOp(...) call, or the argument of
# make_unique<Class>(...): ElementwiseOp's is the function after "tile.", AtomicOp's the combine
# after "atomic_").
NAME_PREFIX = {"ElementwiseOp": "tile.", "AtomicOp": "atomic_"}


def op_names(files):
    names = set()
    for rel, text in files:
        if rel.startswith("op/"):
            names.update(re.findall(r'TileOpDef\{\s*"([A-Za-z0-9_.]+)"', text))
            names.update(re.findall(r'\bTileOp\(\s*"([A-Za-z0-9_.]+)"', text))
            for cls, name in re.findall(r'make_unique<(\w+)>\(\s*"([A-Za-z0-9_.]+)"', text):
                names.add(NAME_PREFIX.get(cls, "") + name)
            # for (const char* u : {"exp", "ln", ...}) register_tile_op(std::make_unique<ElementwiseOp>(u, ...
            for var, body in re.findall(r'for \(const char\* (\w+) : \{([^}]*)\}\)', text):
                m = re.search(r'make_unique<(\w+)>\(\s*(?:std::string\("tile\."\) \+ )?' + var + r'\b', text)
                if m:
                    names.update(NAME_PREFIX.get(m.group(1), "") + n for n in re.findall(r'"([A-Za-z0-9_.]+)"', body))
    return names


def main(argv):
    show = "--list" in argv
    files = sorted(sources())
    names = op_names(files)
    lit = r'"([A-Za-z0-9_.]+)"'
    cmp_re = re.compile(r'(?:==|!=)\s*' + lit + r'|' + lit + r'\s*(?:==|!=)')
    prefix_re = re.compile(r'(?:rfind|starts_with|compare)\(\s*(?:0,\s*\d+,\s*)?' + lit)
    # a name in a list of names ({"copy", "gemm", ...}: a set or table looked up by name)
    list_re = re.compile(r'[{,]\s*' + lit + r'(?=\s*[,}])(?!\s*,\s*\{)')
    floor_re = re.compile(r'%\s*\w+\s*!=\s*0\)?\s*&&\s*\(\(?\s*\w+\s*<\s*0\)?\s*!=\s*\(?\s*\w+\s*<\s*0'
                          r'|\w+\s*!=\s*0\s*&&\s*\(\(\w+\s*<\s*0\)\s*!=\s*\(\w+\s*<\s*0\)\)\)\s*\w+\s*\+=')
    floor_def_re = re.compile(r'\b(?:int64_t|i128|T)\s+(?:floor_?div\w*|floor_?mod\w*|fdiv|fmod_i\w*)\s*\(')
    eval_re = re.compile(r'case BinOp::kMul:[^\n]*?[A-Za-z_]\w*\s*\*\s*[A-Za-z_]\w*')
    walk_re = re.compile(r'case (?:ExprKind|XOp)::kBinary\b')
    apply_re = re.compile(r'\bscalar::(?:int|float)_binary\(')
    corner = r'\s*(?:[^{};,()]*(?:\([^()]*\))?[^{};,()]*\*[^{};,]*|sat_mul\([^()]*\))\s*'
    corners_re = re.compile(r'\{' + corner + ',' + corner + ',' + corner + ',' + corner + r'\}', re.S)
    kernel_re = re.compile(r'block_vars\[\w+\],\s*Range\(make_int\(0')

    cmps, floors, floor_defs, semantics, evals, bounds, kernels = [], [], [], set(), set(), set(), []
    layout_kinds = []
    layout_kind_re = re.compile(r"TileOpKind::|\bis_tile_op\(|\btile_op_kind\(|\btile_op_as<")
    for rel, text in files:
        if corners_re.search(text):
            bounds.add(rel)
        if walk_re.search(text) and (apply_re.search(text) or eval_re.search(text)):
            evals.add(rel)
        for no, line in enumerate(text.split("\n"), 1):
            where = f"src/{rel}:{no}: {line.strip()}"
            if rel not in REGISTRY_FILES:
                line = line.split("//")[0]
                hits = [a or b for a, b in cmp_re.findall(line)]
                hits = [h for h in hits if h in names or h.startswith("tile.")]
                hits += [p for p in prefix_re.findall(line) if any(n.startswith(p) for n in names)]
                if rel.split("/")[0] not in ("op",):
                    hits += [h for h in list_re.findall(line) if h in names or h.startswith("tile.")]
                cmps += [(rel, where)] * len(hits)
            if rel not in FLOOR_OWNER:
                if floor_re.search(line):
                    floors.append((rel, where))
                if floor_def_re.search(line):
                    floor_defs.append((rel, where))
            if eval_re.search(line):
                semantics.add(rel)
            if kernel_re.search(line):
                kernels.append((rel, where))
            if rel.startswith("layout/") and layout_kind_re.search(line.split("//")[0]):
                layout_kinds.append((rel, where))

    edges, _ = check_layers.scan()
    bad = check_layers.wrong_way(edges)
    below = check_layers.closure()
    bad_pairs = sorted({(a, b) for (a, b) in edges if b not in below[a]})
    sizes = sorted(((text.count("\n"), rel) for rel, text in files), reverse=True)

    by_layer = {}
    for rel, _ in cmps:
        layer = check_layers.layer_of(rel)
        by_layer[layer] = by_layer.get(layer, 0) + 1
    print(f"op-name comparisons outside the registry: {len(cmps)}  "
          f"({', '.join(f'{k} {v}' for k, v in sorted(by_layer.items()))})")
    print(f"floor-div/mod rule sites: {len(floors)} lines in {len({r for r, _ in floors})} files; "
          f"own floor-div helpers defined: {len(floor_defs)}")
    print(f"scalar operator semantics defined in: {len(semantics)} files ({', '.join(sorted(semantics))})")
    print(f"scalar expression evaluators: {len(evals)} ({', '.join(sorted(evals))})")
    print(f"constant-bounds analyses: {len(bounds)} ({', '.join(sorted(bounds))})")
    print(f"kernel block/thread bindings written: {len(kernels)}")
    print(f"operator-kind tests in layout inference: {len(layout_kinds)}")
    print(f"wrong-way includes: {len(bad)} lines, {len(bad_pairs)} layer pairs "
          f"({', '.join(f'{a} -> {b}' for a, b in bad_pairs)})")
    print("largest files: " + ", ".join(f"src/{r} ({n} lines)" for n, r in sizes[:3]))
    if show:
        for title, items in (("op-name comparisons", cmps), ("floor-div rule sites", floors),
                             ("floor-div helpers", floor_defs), ("kernel bindings", kernels),
                             ("operator-kind tests in layout inference", layout_kinds)):
            print(f"\n{title}:")
            for _, w in items:
                print("  " + w)
        print("\nwrong-way includes:")
        for line in bad:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
