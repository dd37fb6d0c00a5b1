"""Marks the phases of a generated cpu flash-attention kernel (bench/cpu_flash_phases/run.sh).

  python instrument.py KERNEL.cc OUT.cc

Inserts `tl_ph(n);` before every top-level statement of the KV loop (`for (int32_t k = 0; ...`) and
after its last one, and writes the statements' first lines to OUT.cc.labels (one per mark).
harness.cc defines tl_ph: it adds the timestamp-counter ticks since the previous mark to the
previous phase."""
import re
import sys


def instrument(lines):
    out, labels = [], []
    in_loop, indent, n, skip = False, None, 0, False
    for line in lines:
        if not in_loop and re.match(r"\s*for \(int32_t k = 0;", line):
            in_loop, indent = True, len(line) - len(line.lstrip()) + 2
            out.append(line)
            continue
        if in_loop:
            cur = len(line) - len(line.lstrip())
            if skip:  # the loop after a #pragma line belongs to the same statement
                skip = False
            elif cur == indent and line.strip() and not line.strip().startswith("}"):
                out.append(" " * indent + f"tl_ph({n});")
                n += 1
                skip = line.strip().startswith("#pragma")
                labels.append(line.strip()[:90])
            if cur == indent - 2 and line.strip() == "}":
                out.append(" " * indent + f"tl_ph({n});")
                labels.append("<end>")
                in_loop = False
        out.append(line)
    if not labels:
        raise SystemExit("no KV loop (for (int32_t k = 0; ...) found in the kernel source")
    return out, labels


if __name__ == "__main__":
    out, labels = instrument(open(sys.argv[1]).read().split("\n"))
    open(sys.argv[2], "w").write("\n".join(out))
    open(sys.argv[2] + ".labels", "w").write("\n".join(labels) + "\n")
