#!/usr/bin/env python3
"""bench/tools/callgrind_calls.py
     The instructions a callgrind file collected, the calls it recorded of
     one function, and their ratio: instructions per call.

usage: callgrind_calls.py [--label TEXT] CALLGRIND_FILE FUNCTION
prints "TEXT,instructions,calls,instructions_per_call" (TEXT: the file's
name without --label).

Callgrind compresses names: "fn=(id) name" or "cfn=(id) name" names an id
the first time, "cfn=(id)" refers to it later, and the "calls=N ..." line
after a "cfn=" counts the calls of that function from the current one.
"""

import re
import sys


def totals(path, function):
    """Returns (instructions, calls of function) of the callgrind file."""
    names = {}
    callee = None
    calls = 0
    instructions = None
    with open(path) as f:
        for line in f:
            m = re.match(r'(c?)fn=\((\d+)\)(?: (.*))?', line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3).strip()
                if m.group(1) == 'c':
                    callee = names.get(m.group(2))
                continue
            if line.startswith('calls=') and callee == function:
                calls += int(line.split('=', 1)[1].split()[0])
            elif line.startswith(('totals:', 'summary:')) and instructions is None:
                instructions = int(line.split()[1])
    return instructions or 0, calls


def main(argv):
    label = None
    if len(argv) > 1 and argv[1] == '--label':
        label = argv[2]
        argv = [argv[0]] + argv[3:]
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    ir, n = totals(argv[1], argv[2])
    print("%s,%d,%d,%s" % (label or argv[1], ir, n, "%.0f" % (ir / n) if n else "-"))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
