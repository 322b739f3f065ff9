#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The layering check of the library (docs/design.md, "What may call what").

Reads the objects of the static library with nm, maps every undefined symbol of each src/
object to the object that defines it, and checks the call graph this gives against the floor
table below:
  - every object of the library has a floor;
  - no object calls one on a higher floor (a call to its own floor or below is fine);
  - the graph has no cycle but the one allowed pair, ehash <-> timewait (the kernel's
    inet_hashtables.c <-> inet_timewait_sock.c);
  - only entry points reap TIME_WAIT entries or take a socket's lock for a public call.
Inline functions of the headers are not objects and are not seen: the check covers the calls
between .c files.

Usage: layering.py LIBSOCKTAB.a [--nm NM]. Prints one line per check, then "N passed, M failed";
exits 1 when a check failed.
"""
import collections
import re
import subprocess
import sys

# The floor table; keep it equal to the one in docs/design.md.
FLOORS = {
    # 0: primitives
    "common": 0, "hash": 0, "random": 0, "cbpf": 0,
    # 1: objects
    "sock": 1, "pool": 1, "dev": 1, "addr": 1,
    # 2: tables
    "ehash": 2, "timewait": 2, "bind": 2, "listen": 2, "reuseport": 2, "portmap": 2,
    "rss": 2, "udp": 2, "sk_lookup": 2,
    # 3: operations
    "connect": 3,
    # 4: entry points
    "socket": 4, "sockopt": 4, "lookup": 4, "diag": 4, "net": 4, "reqsk": 4,
}
FLOOR_NAMES = ["primitives", "objects", "tables", "operations", "entry points"]
ALLOWED_CYCLES = [{"ehash", "timewait"}]
ENTRY = 4
# What only entry points may call: reaping TIME_WAIT entries, and the lock of a public call.
ENTRY_ONLY = ["socktab__tw_reap", "socktab__tw_expire", "socktab__sk_lock_open"]

OBJ = re.compile(r"^[^:]*:src_(\w+)\.c\.o:\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z]) (\S+)$")


def nm(tool, lib, *flags):
    out = subprocess.run([tool, "-A", *flags, lib], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        m = OBJ.match(line)
        if m:
            yield m.group(1), m.group(2), m.group(3)


def graph(tool, lib):
    defs, objs = {}, set()
    for obj, kind, sym in nm(tool, lib, "--defined-only"):
        objs.add(obj)
        if kind in "TDBRCVWG":
            defs[sym] = obj
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for obj, _, sym in nm(tool, lib, "-u"):
        objs.add(obj)
        if sym in defs and defs[sym] != obj:
            edges[obj][defs[sym]].add(sym)
    return objs, edges


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    tool = "nm"
    args = list(argv[1:])
    if "--nm" in args:
        i = args.index("--nm")
        tool = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write("usage: layering.py LIBSOCKTAB.a [--nm NM]\n")
        return 2
    objs, edges = graph(tool, args[0])
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(("ok    " if ok else "FAIL  ") + what)
        if ok:
            passed += 1
        else:
            failed += 1

    check(len(objs) > 0, "the library has objects (%d)" % len(objs))
    for obj in sorted(objs):
        check(obj in FLOORS, "%s has a floor%s" % (obj, "" if obj in FLOORS else
                                                   ": add it to the floor table"))
    for a in sorted(edges):
        for b in sorted(edges[a]):
            fa, fb = FLOORS.get(a), FLOORS.get(b)
            if fa is None or fb is None:
                continue
            syms = " ".join(sorted(edges[a][b]))
            check(fb <= fa, "%s (%d %s) -> %s (%d %s): %s" %
                  (a, fa, FLOOR_NAMES[fa], b, fb, FLOOR_NAMES[fb],
                   syms if fb <= fa else "calls up: " + syms))
    cycles = [c for c in sccs(objs, edges) if len(c) > 1]
    for c in cycles:
        check(c in ALLOWED_CYCLES, "cycle %s%s" % (" <-> ".join(sorted(c)),
                                                  " (allowed)" if c in ALLOWED_CYCLES else ""))
    check(all(c in ALLOWED_CYCLES for c in cycles), "no cycle but ehash <-> timewait")
    for sym in ENTRY_ONLY:
        users = sorted(a for a in edges for b in edges[a] if sym in edges[a][b])
        bad = [u for u in users if FLOORS.get(u, ENTRY) != ENTRY]
        check(not bad, "%s is used by entry points only (%s)%s" %
              (sym, " ".join(users) or "none", ": not " + " ".join(bad) if bad else ""))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
