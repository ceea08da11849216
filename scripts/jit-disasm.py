#!/usr/bin/env python3
"""Disassembles a method the JIT compiled, without an hsdis plugin.

HotSpot prints a compiled method's code as hex when it finds no disassembler (Debian's
libhsdis0-fcml has only the entry point older JDKs called, not JDK 17's
decode_instructions_virtual, so it is not loaded). This turns that hex into objdump's Intel
listing. Usage, from the repository root:

  java --add-modules jdk.incubator.vector -XX:+UnlockDiagnosticVMOptions \\
      -XX:CompileCommand=print,CLASS::METHOD ... > out.txt
  python3 scripts/jit-disasm.py out.txt [N]

N picks the N-th second-tier (C2) compilation in the output (default: the last, the one that
ran the method whole rather than an on-stack replacement of one loop). Needs objdump (binutils).
"""
import re
import subprocess
import sys
import tempfile

lines = open(sys.argv[1]).read().split("\n")
starts = [i for i, line in enumerate(lines) if line.startswith("Compiled method (c2)")]
if not starts:
    sys.exit("no second-tier (c2) compilation in " + sys.argv[1])
pick = int(sys.argv[2]) - 1 if len(sys.argv) > 2 else len(starts) - 1
start = starts[pick]
print(lines[start])
code, base = bytearray(), None
for line in lines[start + 1:]:
    if line.startswith("Compiled method") or line.startswith("-----"):
        break
    m = re.match(r"\s+0x([0-9a-f]+): ((?:[0-9a-f]{4} ?\|? ?)+)$", line)
    if m and "|" in line:
        if base is None:
            base = int(m.group(1), 16)
        code += bytes.fromhex(re.sub(r"[ |]", "", m.group(2)))
if base is None:
    sys.exit("no hex code after " + lines[start])
with tempfile.NamedTemporaryFile(suffix=".bin") as f:
    f.write(code)
    f.flush()
    listing = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", "-Mintel",
                              "--adjust-vma=%#x" % base, f.name], capture_output=True, text=True, check=True)
print(listing.stdout.split("<.data>:", 1)[-1])
