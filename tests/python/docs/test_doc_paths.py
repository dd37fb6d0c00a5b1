"""Every file, directory and `make` target that README.md and docs/*.md name exists (issue 18).

What counts as naming a path:
- a path starting at a top-level directory of the repository (`src/...`, `docs/...`, `bench/...`),
  in backticks or not;
- a backticked relative path with a file extension (`runtime/paths.h`, `autotuner/tuner.py`),
  looked up from the repository root and from python/, python/tilelang/, src/, include/, tests/, docs/;
- an upper-case Markdown file name (`ARCHITECTURE.md`), looked up at the root and in docs/;
- a Markdown link target outside code blocks;
- `make <target>` in backticks: the Makefile has that target;
- no absolute path of the machine a doc was written on (/work/...).
Placeholders match anything: `<name>`, `{a,b}`, `*`. Upstream TileLang programs named in
docs/COMPATIBILITY.md are checked against scripts/upstream_suite.txt instead, and the few files that
only exist after a run are listed in GENERATED with the command that writes them."""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
TOP_DIRS = ["src", "include", "python", "tests", "docs", "scripts", "bench", "examples", "tools"]
BASES = ["", "python", "python/tilelang", "src", "include", "tests", "docs"]
GENERATED = {
    "bench/results/gpu_results.jsonl": "written by `make bench` (bench/run_all.py) on a CUDA machine",
}

ROOTED = re.compile(r"(?<![\w./<>*{-])((?:%s)/[\w.<>*{},/-]*)" % "|".join(TOP_DIRS))
BACKTICKED = re.compile(r"`([^`\s]+)`")
PATH_WITH_EXT = re.compile(r"^[\w.<>*{},-]+(?:/[\w.<>*{},-]+)+\.(?:md|py|sh|cc|h|c|cu|txt|toml|json|jsonl)$")
MD_NAME = re.compile(r"(?<![\w./<>*-])([A-Z][A-Z_0-9]*\.md)\b")
MAKE = re.compile(r"`make ([\w-]+)")
LINK = re.compile(r"\]\(([^)#\s]+)\)")
MACHINE = re.compile(r"(?<![\w.])(/work/[\w./+-]*)")  # a path of the machine a doc was written on


def _upstream_programs():
    progs = []
    with open(os.path.join(ROOT, "scripts", "upstream_suite.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and not parts[0].startswith("#"):
                progs.append(parts[1])
    return progs


UPSTREAM = _upstream_programs()
MAKE_TARGETS = set(re.findall(r"^([\w-]+):", open(os.path.join(ROOT, "Makefile")).read(), re.M))


def _exists(path, bases=BASES):
    pattern = re.sub(r"\{[^}]*\}", "*", re.sub(r"<[^>]*>", "*", path.rstrip("/")))
    return any(glob.glob(os.path.join(ROOT, b, pattern)) for b in bases)


def _named(doc):
    """(line number, what, name) for everything `doc` names."""
    out, fenced = [], False
    with open(os.path.join(ROOT, doc)) as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        text = re.sub(r"https?://\S+", "", line)
        for m in ROOTED.finditer(text):
            out.append((n, "path", m.group(1).rstrip(".,;:)")))
        for m in BACKTICKED.finditer(text):
            if PATH_WITH_EXT.match(m.group(1)):
                out.append((n, "path", m.group(1)))
        for m in MD_NAME.finditer(text):
            out.append((n, "doc", m.group(1)))
        for m in MACHINE.finditer(text):
            out.append((n, "machine", m.group(1).rstrip(".,;:)")))
        for m in MAKE.finditer(text):
            out.append((n, "make", m.group(1)))
        if not fenced:
            for m in LINK.finditer(text):
                out.append((n, "link", m.group(1)))
    return out


def _missing(doc):
    bad = []
    for n, what, name in _named(doc):
        if what == "path":
            ok = (_exists(name) or name in GENERATED
                  or any(p == name or p.startswith(name.rstrip("/") + "/") or p.startswith(name + ".")
                         for p in UPSTREAM))
        elif what == "doc":
            ok = _exists(name, ["", "docs"])
        elif what == "machine":
            ok = False  # a clone elsewhere has no such path
        elif what == "make":
            ok = name in MAKE_TARGETS
        else:
            ok = os.path.exists(os.path.join(ROOT, os.path.dirname(doc), name))
        if not ok:
            bad.append(f"{doc}:{n}: {what} {name}")
    return bad


@pytest.mark.parametrize("doc", DOCS)
def test_every_named_path_exists(doc):
    assert _missing(doc) == []


def test_the_checker_catches_what_it_should(tmp_path):
    """A sample doc with one name of each kind that does not exist, and ones that do."""
    sample = tmp_path / "docs" / "SAMPLE.md"
    sample.parent.mkdir()
    sample.write_text("See src/runtime/nowhere.cc, `runtime/compile.h`, `target/missing.h` and ARCHITECTURE.md,\n"
                      "MISSING_DOC.md, `make test`, `make nothing`, [a link](NOPE.md), examples/<kernel>/,\n"
                      "scripts/no_such_script.sh and examples/gemv (an upstream program), /work/shared/X.md.\n"
                      "```\nf(x)](not a link)\n```\n")
    doc = os.path.relpath(str(sample), ROOT)  # names resolve against the repository
    bad = [b.split(": ", 1)[1] for b in _missing(doc)]
    assert sorted(bad) == sorted(["path src/runtime/nowhere.cc", "path target/missing.h", "doc MISSING_DOC.md",
                                  "doc NOPE.md", "make nothing", "link NOPE.md", "path scripts/no_such_script.sh",
                                  "machine /work/shared/X.md"])
