#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The Context check of the public headers, and the folder map check of docs/design.md.

Every public function declared in include/socktab/*.h (and version.h.in) states where it may run
with one sentence of a closed set, the first sentence after "Context:" in its comment, word for
word (socktab/socktab.h, "Context", explains each):

  1. Context: any thread, registered or not.
  2. Context: registered thread; may run inside an RCU read-side section and a dispatch callback.
  3. Context: registered thread; may run inside an RCU read-side section, not inside a dispatch
     callback.
  4. Context: registered thread, only inside an RCU read-side section.
  5. Context: inside a dispatch callback only.
  6. Context: registered thread, outside any RCU read-side section of its own; waits for a grace
     period.
  7. Context: registered thread, outside any RCU read-side section of its own.

A free sentence may follow (the locks it takes, what the arguments must be). A comment that
stands on lines of its own covers the declarations that follow it up to the next blank line or
comment (#define lines and other declarations between are allowed), so one Context sentence
covers every function of its group; such a comment holds exactly one Context sentence.

Default mode (`contexts.py SRCDIR`) fails on:
  (a) a public function declaration whose comment has no Context sentence (or has no comment,
      or has more than one Context sentence);
  (b) a "Context:" anywhere in the headers whose first sentence is not one of the set;
  (c) a header under include/socktab/ the parser could not read through (an unterminated
      comment or declaration, unbalanced braces, or a socktab_*( name outside comments that
      was not parsed as a declaration, so its Context would go unchecked); and socktab.h not
      listing the set exactly as this file does.
It prints one line per problem, as FILE:LINE: NAME: what, then
"contexts: N declarations, M sentences, P problems", and exits 1 when P > 0.

`contexts.py SRCDIR --folder-map` checks instead that every .c and .h file of src/ appears in
the map of the folders of docs/design.md ("Map of the folders": the names column of the src/
part, where "hash.[ch]" names hash.c and hash.h), and prints
"folder map: N files, M missing".
"""
import glob
import os
import re
import sys

SET = [
    "Context: any thread, registered or not.",
    "Context: registered thread; may run inside an RCU read-side section and a dispatch "
    "callback.",
    "Context: registered thread; may run inside an RCU read-side section, not inside a "
    "dispatch callback.",
    "Context: registered thread, only inside an RCU read-side section.",
    "Context: inside a dispatch callback only.",
    "Context: registered thread, outside any RCU read-side section of its own; waits for a "
    "grace period.",
    "Context: registered thread, outside any RCU read-side section of its own.",
]

DECL = re.compile(r"^(?!typedef\b)[A-Za-z_][\w\s\*]*?\b(socktab_\w+)\s*\(", re.S)
NAME_CALL = re.compile(r"\bsocktab_\w+\s*\(")
CONTEXT = re.compile(r"Context:")


def norm(text):
    return " ".join(text.split())


def comment_text(raw):
    """The words of a /* ... */ comment, its leading stars and the delimiters removed."""
    body = raw[2:-2]
    lines = [re.sub(r"^\s*\*(?!/)\s?", "", ln) for ln in body.split("\n")]
    return norm(" ".join(lines))


class Header:
    def __init__(self, path, rel):
        self.path, self.rel = path, rel
        self.comments = []  # (line, end_line, text)
        self.decls = []     # (line, name, comment index or None)
        self.problems = []

    def problem(self, line, name, what):
        self.problems.append(f"{self.rel}:{line}: {name}: {what}")


def parse(path, rel):
    """Split a header into comments and top-level statements, and bind each declaration to the
    comment that covers it: the last comment that stood on lines of its own at the top level,
    unless a blank line came between."""
    h = Header(path, rel)
    src = open(path, encoding="utf-8").read()
    i, n, line = 0, len(src), 1
    depth, stmt, stmt_line = 0, [], None
    current = None            # index of the comment covering the declarations that follow
    line_start = True         # only blanks so far on this line
    line_content = False      # this line holds a comment or code
    extern_c = 0              # open extern "C" { blocks
    code = {}                 # line -> code outside comments and preprocessor lines
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                h.problem(line, "-", "unterminated comment: the rest of the file is unread")
                break
            raw = src[i:j + 2]
            h.comments.append((line, line + raw.count("\n"), comment_text(raw)))
            if line_start and depth == 0 and not stmt:
                current = len(h.comments) - 1
            line += raw.count("\n")
            line_content, i = True, j + 2
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            h.comments.append((line, line, norm(src[i + 2:j])))
            if line_start and depth == 0 and not stmt:
                current = len(h.comments) - 1
            line_content, i = True, j
            continue
        if c == "#" and line_start and not stmt:
            # A preprocessor line (with its continuations): neither code nor a separator.
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    line += 1
                    i += 1
                i += 1
            line_content = True
            continue
        if c == "\n":
            if not line_content and depth == 0 and not stmt:
                current = None
            line += 1
            line_start, line_content = True, False
            if stmt:
                stmt.append(" ")
            i += 1
            continue
        if c.isspace():
            if stmt:
                stmt.append(c)
            code[line] = code.get(line, "") + " "
            i += 1
            continue
        line_start, line_content = False, True
        if not stmt and depth == 0 and src.startswith('extern "C"', i):
            j = src.find("{", i)
            if j >= 0 and not src[i + 10:j].strip():
                extern_c += 1
                i = j + 1
                continue
        if not stmt and depth == 0 and c == "}" and extern_c:
            extern_c -= 1
            i += 1
            continue
        code[line] = code.get(line, "") + c
        if not stmt:
            stmt_line = line
        stmt.append(c)
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                h.problem(line, "-", "unbalanced '}'")
                depth = 0
        elif c == ";" and depth == 0:
            s = norm("".join(stmt))
            m = DECL.match(s)
            if m and "{" not in s:
                h.decls.append((stmt_line, m.group(1), current, s))
            stmt = []
        i += 1
    if stmt:
        h.problem(stmt_line, "-", "unterminated declaration at the end of the file")
    if depth or extern_c:
        h.problem(line, "-", "unbalanced braces at the end of the file")

    # (c) every socktab_*( outside comments and preprocessor lines must be a parsed
    # declaration, or its Context would go unchecked.
    declared = {d[1] for d in h.decls}
    for ln, text in sorted(code.items()):
        for m in NAME_CALL.finditer(text):
            name = m.group(0).rstrip("( \t")
            if name not in declared:
                h.problem(ln, name, "not parsed as a declaration: its Context goes unchecked")
    return h


def sentences(text):
    """Each "Context:" of a comment, with what follows it."""
    return [text[m.start():] for m in CONTEXT.finditer(text)]


def in_set(rest):
    for s in SET:
        if rest.startswith(s) and (len(rest) == len(s) or rest[len(s)] == " "):
            return s
    return None


def check_contexts(srcdir):
    inc = os.path.join(srcdir, "include", "socktab")
    paths = sorted(glob.glob(os.path.join(inc, "*.h")) + glob.glob(os.path.join(inc, "*.h.in")))
    problems, ndecl, nsent = [], 0, 0
    if not paths:
        problems.append(f"{inc}: no headers found")
    headers = []
    for p in paths:
        h = parse(p, os.path.relpath(p, srcdir))
        headers.append(h)
        # (b) every Context sentence, wherever it is, is one of the set.
        covers = {}
        for _, name, ci, _ in h.decls:
            covers.setdefault(ci, []).append(name)
        for ci, (start, _, text) in enumerate(h.comments):
            for rest in sentences(text):
                nsent += 1
                if not in_set(rest):
                    first = rest.split(". ")[0][:100]
                    h.problem(start, ", ".join(covers.get(ci, ["(no declaration)"])),
                              f"Context sentence not in the set: \"{first}\"")
        # (a) every declaration has a comment with exactly one Context sentence.
        for ln, name, ci, _ in h.decls:
            ndecl += 1
            if ci is None:
                h.problem(ln, name, "no comment covers this declaration (no Context sentence)")
                continue
            found = sentences(h.comments[ci][2])
            if not found:
                h.problem(ln, name, f"its comment (line {h.comments[ci][0]}) has no Context "
                          "sentence")
            elif len(found) > 1:
                h.problem(ln, name, f"its comment (line {h.comments[ci][0]}) has "
                          f"{len(found)} Context sentences; a group takes one")
        problems.extend(h.problems)

    # The set as socktab.h describes it must be this file's, in order.
    umbrella = [h for h in headers if os.path.basename(h.path) == "socktab.h"]
    if umbrella:
        listed = []
        for _, _, text in umbrella[0].comments:
            listed.extend(in_set(r) for r in sentences(text))
        if listed != SET:
            problems.append(f"{umbrella[0].rel}: the Context set it lists differs from "
                            "tests/unit/contexts.py's SET")
    else:
        problems.append("include/socktab/socktab.h: missing")

    for p in problems:
        print(p)
    print(f"contexts: {ndecl} declarations, {nsent} sentences, {len(problems)} problems")
    return 1 if problems else 0


def map_names(design):
    """The file names of the src/ part of the folder map in docs/design.md."""
    text = open(design, encoding="utf-8").read()
    m = re.search(r"^## Map of the folders\s*\n```\n(.*?)\n```", text, re.S | re.M)
    if not m:
        return None
    names, in_src = set(), False
    for line in m.group(1).split("\n"):
        if re.match(r"^\S", line):
            in_src = line.startswith("src/")
            continue
        if not in_src:
            continue
        # The names column: two spaces in, up to the first run of two or more spaces.
        cm = re.match(r"^  (\S(?:\S| (?! ))*)", line)
        if not cm:
            continue
        for tok in cm.group(1).split():
            fm = re.fullmatch(r"([\w.-]+)\.(\[ch\]|c|h)", tok)
            if not fm:
                continue
            exts = ["c", "h"] if fm.group(2) == "[ch]" else [fm.group(2)]
            names.update(f"{fm.group(1)}.{e}" for e in exts)
    return names


def check_folder_map(srcdir):
    design = os.path.join(srcdir, "docs", "design.md")
    names = map_names(design)
    if names is None:
        print("docs/design.md: no \"## Map of the folders\" code block")
        print("folder map: 0 files, 0 missing")
        return 1
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(srcdir, "src", "*.[ch]")))
    missing = [f for f in files if f not in names]
    for f in missing:
        print(f"docs/design.md: src/{f} is missing from the map of the folders")
    print(f"folder map: {len(files)} files, {len(missing)} missing")
    return 1 if missing else 0


def main():
    args = sys.argv[1:]
    srcdir = next((a for a in args if not a.startswith("--")),
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if "--folder-map" in args:
        return check_folder_map(srcdir)
    return check_contexts(srcdir)


if __name__ == "__main__":
    sys.exit(main())
