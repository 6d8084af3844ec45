"""Summarise `cuobjdump -sass` output: per kernel, the SASS opcodes of its innermost loop body.

The loop body is taken as the instructions between the last backward-branch target and the
branch itself (the hottest loop of these benchmarks is the last one in each kernel).
Usage: python sass_summary.py micro.sass > sass_summary.txt
"""

import collections
import re
import subprocess
import sys

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names


def main(path):
    text = open(path).read()
    funcs = re.split(r"\n\s*Function : ", text)[1:]
    names = [f.split("\n", 1)[0].strip() for f in funcs]
    pretty = demangle(names)
    for name, body in sorted(zip(pretty, funcs, strict=True)):
        instrs = [(int(m.group(1), 16), m.group(2), m.group(3)) for m in LINE.finditer(body)]
        loops = []
        for addr, op, args in instrs:
            if op == "BRA":
                target = re.search(r"0x([0-9a-f]+)", args)
                if target and int(target.group(1), 16) < addr:
                    loops.append((int(target.group(1), 16), addr))
        if loops:
            lo, hi = max(loops, key=lambda l: l[1] - l[0])  # the largest loop: the timed one
            body_ops = [op for a, op, _ in instrs if lo <= a <= hi]
            count = collections.Counter(body_ops)
            print(f"{name}\n  loop 0x{lo:x}..0x{hi:x}: {len(body_ops)} instr: {dict(count.most_common())}")
        else:
            count = collections.Counter(op for _, op, _ in instrs)
            print(f"{name}\n  no loop: {dict(count.most_common(10))}")


if __name__ == "__main__":
    main(sys.argv[1])
