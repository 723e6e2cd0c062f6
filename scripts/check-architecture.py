#!/usr/bin/env python3
"""Check Graft's layering rules (issue 23): domain -> service -> db, with the adapters
(console, mcp, cli, server) on top and only db talking to sqlx.

Checks, each violation printed as `path:line: message`, then a summary:
  1. The adapters (src/console, src/mcp, src/cli, src/server) never name `crate::db`
     (in `use` lines, grouped imports such as `use crate::{db::X, service}`, inline
     paths, or super:: paths that reach it). The one allowance is the database copy
     command: a line ending with the comment marker `// arch: db copy`.
  1a. The adapters never name `crate::proxy` either: building and sending vendor
     requests, and redaction, are reached through the service.
  1b. An adapter names no other adapter, except the shared wording (`console::words`,
     SPEC §1's words for people in the console, the CLI and MCP answers); src/server
     is the composition root (it mounts the console and MCP), and the CLI's serve
     command starts the server.
  2. src/db never names `crate::service`.
  3. Only src/db names sqlx (`sqlx::...` or `use sqlx`).
  4. No .rs file in src has more than 700 lines outside its `#[cfg(test)]` items
     (the attribute through the item's closing brace, or its `;` for `mod tests;`).
  5. No import cycle between files. A file depends on every module it names through a
     `crate::`, `super::` or `self::` path (use trees across lines, inline paths, and
     `db::X` after `use crate::db;`), resolved to the longest module prefix that is a
     file. `mod x;` declarations and a parent module naming its own children (its
     re-exports) are not edges; a child naming its parent or a sibling is. A re-export
     passes through: `crate::db::ToolRow`, with `pub use tools::*;` in src/db/mod.rs and
     `struct ToolRow` in src/db/tools.rs, names both db/mod.rs and db/tools.rs.
     Each strongly connected component of more than one file is one violation, shown as
     one representative cycle (a shortest one, by BFS inside the component) with the
     line that makes each edge. Cycles between top-level modules (src/db, src/service,
     ...) are printed as notes; with --module-cycles they count as violations too.
  6. No call cycle between the files of src/service: `Graft` is one type whose
     methods are spread over files, so imports alone do not show which file's use
     case calls which. A file depends on another when it calls `self.NAME(…)` (or
     `graft.`, `self.graft.`, `Self::`, `Graft::`; across lines too) and NAME is a
     method of an `impl … Graft` block of that file (a method defined in two files
     counts for both), or names `super::FILE::NAME`. src/service/mod.rs (the type, its
     configuration, the write transaction, accessors) is left out: it is the type every
     file extends. Each strongly connected component is one violation, as in check 5.
Comments (doc comments included) and string literals are blanked before scanning, and
`#[cfg(test)]` items are left out of the dependency graph (checks 1-3 still apply).

Usage: scripts/check-architecture.py [--report] [--module-cycles]
  --report  print the same but always exit 0 (while a refactor is under way)
Exit status: 1 if any violation, else 0.
"""
import bisect
import os
import re
import sys
from collections import deque

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = "src"
LIMIT = 700
ADAPTERS = ("src/console/", "src/mcp/", "src/cli/", "src/server/")
ADAPTER_MODULES = {"console", "mcp", "cli", "server"}
# (from, to) top-level adapter pairs that are allowed: composition
ADAPTER_EDGES = {("server", "console"), ("server", "mcp"), ("cli", "server")}
COPY_MARKER = "// arch: db copy"


# comments (line, doc, block) and string, byte, raw and char literals; a lifetime such
# as 'a has no closing quote; a nested /* /* */ */ ends at its first */ (rare enough)
LEXEME = re.compile("|".join([
    r"//[^\n]*", r"/\*.*?\*/",
    r'\bb?r(#*)".*?"\1',                        # raw strings: r"..", r#".."#, br".."
    r'b?"(?:\\.|[^"\\])*"',                     # strings and byte strings
    r"b?'(?:\\(?:u\{[0-9a-fA-F]+\}|x..|.)|[^\\\n'])'",  # char literals
]), re.S)


def strip(text):
    """Blank comments and literals, keeping newlines so offsets and lines stay put."""
    return LEXEME.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def test_items(code):
    """Line ranges (1-based, inclusive) of items following #[cfg(test)]."""
    ranges = []
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        if any(a <= code.count("\n", 0, m.start()) + 1 <= b for a, b in ranges):
            continue  # nested in a test item already counted
        depth, j = 0, m.end()
        while j < len(code):  # the item's body '{' or its ';', outside () and []
            ch = code[j]
            depth += ch in "([" and 1 or ch in ")]" and -1 or 0
            if depth == 0 and ch in "{;":
                break
            j += 1
        if j < len(code) and code[j] == "{":
            braces = 0
            while j < len(code):
                braces += {"{": 1, "}": -1}.get(code[j], 0)
                if braces == 0:
                    break
                j += 1
        ranges.append((code.count("\n", 0, m.start()) + 1, code.count("\n", 0, j) + 1))
    return ranges


def use_paths(code, pos):
    """Expand the path or use tree starting at pos: [(segments, offset of first), ...]."""
    tok = re.compile(r"\s*(::|\{|\}|,|\*|[A-Za-z_][A-Za-z0-9_]*)")

    def tree(i, prefix):
        out, seg_pos = [], None
        while (m := tok.match(code, i)) and re.match(r"[A-Za-z_]", m.group(1)):
            if seg_pos is None:
                seg_pos = m.start(1)
            prefix, i = prefix + [m.group(1)], m.end()
            if not ((m := tok.match(code, i)) and m.group(1) == "::"):
                if m and m.group(1) == "as":  # `x as y`: skip the alias
                    i = (tok.match(code, m.end()) or m).end()
                return [(prefix, seg_pos)], i
            i = m.end()
        m = tok.match(code, i)
        if m and m.group(1) == "{":
            i = m.end()
            while (m := tok.match(code, i)) and m.group(1) != "}":
                if m.group(1) == ",":
                    i = m.end()
                    continue
                sub, j = tree(i, prefix)
                if j == i:  # something unexpected: stop rather than loop
                    break
                out, i = out + sub, j
            return out, (m.end() if m else i)
        if m and m.group(1) == "*":
            return [(prefix + ["*"], seg_pos if seg_pos is not None else m.start(1))], m.end()
        return [(prefix, seg_pos if seg_pos is not None else i)], i

    return tree(pos, [])[0]


def module_of(path):
    parts = path[len(SRC) + 1:-3].split("/")
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts[:-1] if parts[-1] == "mod" else parts)


def absolute(segs, mod):
    """A path starting with crate/self/super or a child's name, from the crate root."""
    if segs[:1] == ["crate"]:
        segs, mod = segs[1:], ()
    base = list(mod)
    while segs[:1] in (["self"], ["super"]):
        base, segs = (base[:-1] if segs[0] == "super" else base), segs[1:]
    return [s for s in base + segs if s != "self"]


def is_parent(f, t):
    """f is a mod.rs or lib.rs and t lies in its module's subtree."""
    m, n = module_of(f), module_of(t)
    return f.endswith(("mod.rs", "lib.rs")) and len(n) > len(m) and n[:len(m)] == m


class Crate:
    def __init__(self, files):
        self.modules = {module_of(f): f for f in files if not f.endswith("main.rs")}
        self.code = {f: strip(open(f, encoding="utf-8").read()) for f in files}
        declared = r"\b(?:struct|enum|fn|trait|type|const|static|mod|union)\s+(\w+)"
        self.defines = {f: set(re.findall(declared, c)) for f, c in self.code.items()}
        self.reexports = {}  # a parent file -> absolute paths it re-exports from its subtree
        for f in self.modules.values():
            for m in re.finditer(r"\bpub(\s*\([^)]*\))?\s+use\s+", self.code[f]):
                for segs, _ in use_paths(self.code[f], m.end()):
                    path = absolute(segs, module_of(f))
                    if is_parent(f, self.resolve(path, follow=False)[0]):
                        self.reexports.setdefault(f, []).append(path)

    def resolve(self, path, follow=True):
        """The file of the longest module prefix of path, then, following that module's
        re-exports (`pub use tools::*`, `pub use auth::AuthedAgent`), the files the rest
        of the path comes from: naming a parent is naming what it passes through."""
        k = len(path)
        while tuple(path[:k]) not in self.modules:
            k -= 1
        found, rest = [self.modules[tuple(path[:k])]], path[k:]
        for r in self.reexports.get(found[0], []) if follow and rest else []:
            glob_from = self.resolve(r[:-1], False)[0]
            if r[-1] == "*" and (rest[0] == "*" or rest[0] in self.defines[glob_from]):
                found += self.resolve(r[:-1] + rest)
            elif rest[0] in ("*", r[-1]):
                found += self.resolve(r + rest[1:])
        return found


def scan(f, crate, edges):
    """Checks 1-4 for one file; records its dependency edges. Returns its violations."""
    code, lines = crate.code[f], open(f, encoding="utf-8").read().split("\n")
    starts = [m.end() for m in re.finditer("\n", code)]
    line_of = lambda off: bisect.bisect_right(starts, off) + 1
    tests, mod, found = test_items(code), module_of(f), []
    outside = len(lines) - (lines[-1] == "") - sum(b - a + 1 for a, b in tests)
    if outside > LIMIT:
        found.append(f"{f}: {outside} lines outside tests (limit {LIMIT})")
    if not f.startswith("src/db/"):
        for m in re.finditer(r"(?<![\w$])sqlx\s*::|\buse\s+sqlx\b", code):
            found.append(f"{f}:{line_of(m.start())}: names sqlx outside src/db")
    named = []  # (path from the crate root, line, as written, seen by checks 1-2)
    for m in re.finditer(r"(?<![\w$:])(crate|super|self)\s*::", code):
        for segs, off in use_paths(code, m.end()):
            named.append((absolute([m.group(1)] + segs, mod), line_of(off),
                          "::".join([m.group(1)] + segs).replace("::self", ""), True))
    # a module brought in by `use` (`use crate::db;`, `use x::{self, y}`), then named
    # as `db::ToolRow`: follow those paths too (for the graph only)
    for m in re.finditer(r"\buse\s+", code):
        for segs, _ in use_paths(code, m.end()):
            path = absolute(segs, mod)
            if path and segs[-1] != "*" and tuple(path) in crate.modules:
                for u in re.finditer(rf"(?<![\w$:]){path[-1]}\s*::", code):
                    for rest, off in use_paths(code, u.end()):
                        shown = "::".join([path[-1]] + rest)
                        named.append((path + rest, line_of(off), shown, False))
    for path, ln, shown, checked in named:
        if checked and path[:1] == ["db"] and f.startswith(ADAPTERS) \
                and COPY_MARKER not in lines[ln - 1]:
            found.append(f"{f}:{ln}: adapter names the database layer ({shown})")
        if checked and path[:1] == ["proxy"] and f.startswith(ADAPTERS):
            found.append(f"{f}:{ln}: adapter names the vendor-request layer ({shown})")
        own = mod[:1] and mod[0]
        if own in ADAPTER_MODULES and path[:1] and path[0] in ADAPTER_MODULES \
                and path[0] != own and path[:2] != ["console", "words"] \
                and (own, path[0]) not in ADAPTER_EDGES \
                and not any(a <= ln <= b for a, b in tests):
            found.append(f"{f}:{ln}: adapter {own} names adapter {path[0]} ({shown})")
        if checked and path[:1] == ["service"] and f.startswith("src/db/"):
            found.append(f"{f}:{ln}: db names the service layer ({shown})")
        if f.endswith("main.rs") or any(a <= ln <= b for a, b in tests):
            continue  # main.rs is another crate; tests are not part of the layering
        for t in crate.resolve(path):
            if t != f and not is_parent(f, t):  # a parent naming its children: no edge
                edges[f].setdefault(t, (ln, shown))
    return found


def main():
    args = set(sys.argv[1:])
    if args - {"--report", "--module-cycles"}:
        sys.exit(__doc__)
    os.chdir(ROOT)
    files = sorted(os.path.join(d, f).replace(os.sep, "/")
                   for d, _, fs in os.walk(SRC) for f in fs if f.endswith(".rs"))
    crate, edges, notes = Crate(files), {f: {} for f in files}, []
    violations = [v for f in files for v in scan(f, crate, edges)]
    for scc in sccs(edges):
        violations.append("cycle: " + describe(cycle_in(scc, edges), edges, scc))
    calls = service_calls(files)
    for scc in sccs(calls):
        violations.append("service call cycle: " + describe(cycle_in(scc, calls), calls, scc))
    mod_edges = {top(f): {} for f in files}  # the same graph between top-level modules
    for f, ts in edges.items():
        for t, (ln, shown) in ts.items():
            if top(f) != top(t):
                mod_edges[top(f)].setdefault(top(t), (f"{f}:{ln}", shown))
    for scc in sccs(mod_edges):
        line = "module cycle: " + describe(cycle_in(scc, mod_edges), mod_edges, scc)
        (violations if "--module-cycles" in args else notes).append(line)
    print("\n".join(violations + ["note: " + n for n in notes]))
    cycles = sum(v.startswith("cycle:") for v in violations)
    print(f"\n{len(violations)} violation(s) ({cycles} file cycle(s)); {len(notes)} note(s)"
          + (" [module cycles are information; --module-cycles counts them]" if notes else ""))
    sys.exit(1 if violations and "--report" not in args else 0)


def sccs(graph):
    """Tarjan's algorithm, iterative: the components of more than one node, sorted."""
    index, low, stack, out = {}, {}, [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = stack[stack.index(v):]
                    del stack[stack.index(v):]
                    out += [sorted(comp)] if len(comp) > 1 else []
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in stack:
                low[v] = min(low[v], index[w])
    return sorted(out)


def cycle_in(scc, graph):
    """A representative cycle: the shortest closed by a BFS inside the SCC from any of
    its nodes, preferring one that crosses more top-level modules."""
    def closed(start):
        prev, queue = {start: None}, deque([start])
        while queue:
            v = queue.popleft()
            for w in sorted(w for w in graph[v] if w in scc):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
    return min(map(closed, scc), key=lambda c: (len(c), -len({top(n) for n in c})))


def service_calls(files):
    """Check 6: the call graph between the files of src/service (tests left out)."""
    code = {}
    for f in files:
        if f.startswith("src/service/") and f != "src/service/mod.rs":
            text = strip(open(f, encoding="utf-8").read())
            lines = text.split("\n")
            for a, b in test_items(text):
                lines[a - 1:b] = [""] * (b - a + 1)
            code[f] = "\n".join(lines)
    # the methods of Graft each file defines: fns at depth 1 of its `impl … Graft {`
    # blocks (a helper type's method of the same name is not one)
    owners = {}
    for f, text in code.items():
        for m in re.finditer(r"\bimpl\b[^{;]*?\bGraft\s*\{", text):
            depth, j = 1, m.end()
            while j < len(text) and depth:
                ch = text[j]
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif depth == 1:
                    fn = re.match(r"fn\s+([a-z_][a-z_0-9]*)", text[j:j + 80])
                    if fn and (j == 0 or not (text[j - 1].isalnum() or text[j - 1] == "_")):
                        owners.setdefault(fn.group(1), set()).add(f)
                j += 1
    by_stem = {f.rsplit("/", 1)[1].removesuffix(".rs"): f for f in code}
    line_of = lambda text, off: text.count("\n", 0, off) + 1
    graph = {f: {} for f in code}
    call = re.compile(r"\b(?:self\.graft|self|graft|Self|Graft)\s*(?:\.|::)\s*"
                      r"([a-z_][a-z_0-9]*)\s*(?:::\s*<[^>]*>\s*)?\(")
    for f, text in code.items():
        for m in call.finditer(text):
            for owner in owners.get(m.group(1), set()) - {f}:
                shown = re.sub(r"\s+", "", m.group())
                graph[f].setdefault(owner, (line_of(text, m.start()), shown))
        for m in re.finditer(r"\bsuper::([a-z_][a-z_0-9]*)::", text):
            t = by_stem.get(m.group(1))
            if t and t != f:
                graph[f].setdefault(t, (line_of(text, m.start()), m.group()))
    return graph


def top(f):
    """A file's top-level module: src/db/x.rs -> src/db, src/cli.rs -> src/cli."""
    if f in ("src/lib.rs", "src/main.rs"):
        return f
    return "/".join(f.split("/")[:2]).removesuffix(".rs")


def describe(cyc, edges, scc):
    """The cycle, the size of its SCC, then the line that makes each edge."""
    rest = f" (one cycle of a component of {len(scc)}: {', '.join(scc)})"
    rest = rest if len(scc) > len(cyc) - 1 else ""
    return " -> ".join(cyc) + rest + "".join(
        f"\n    {a}" + (":" if a.endswith(".rs") else " at ") + "{}: {}".format(*edges[a][b])
        for a, b in zip(cyc, cyc[1:]))


if __name__ == "__main__":
    main()
