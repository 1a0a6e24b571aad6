#!/usr/bin/env python3
"""Checks the engine's layering (run by scripts/test.sh).

1. Only `engine/src/store/` names redb: no other engine file (nor the CLI, the C ABI or the
   benches) uses a `redb` path.
2. The engine's module graph has no cycle. Nodes are source files; an edge is a `use` of, or a
   path into, another module (`crate::…`, `super::…`), resolved to the file that defines it
   (a `pub use` in a `mod.rs` is an edge to the file it re-exports from; a `mod x;`
   declaration is not an edge). Tests (`tests.rs`, `#[cfg(test)] mod tests`) are left out.
3. Nothing below the façade imports it: a file may name `crate::memory` only if it works on
   the handle, extending it (`impl Memory` / `impl Inner`) or taking it (a `&Inner` /
   `&Memory` parameter or field), so the store, the catalog, the index of forgetting, the
   value types and the pure algorithms never depend on it.
4. Engine code imports an item from the module that defines it, never through the crate
   root's re-exports (`crate::Timestamp`), which would tie every module to every other.
5. No crate of the workspace (every member Cargo.toml names) has a circle between files
   counted as the imports are written:
   an import through a folder's `mod.rs` is an edge to that `mod.rs` (which loads the whole
   folder), so a circle that only re-export resolution would hide is found too.
6. The engine's parts (its top-level files and folders) stand on the floors of `FLOORS`, and
   every import, counted as written (through a folder's face too), points to a lower floor:
   none runs up, none goes sideways to another part of the same floor. A new part must be
   given a floor here.

Exits 1 and says what is wrong, with the files, on any violation.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ENGINE = os.path.join(ROOT, "engine", "src")

# The engine's parts, from the ground up (ARCHITECTURE.md draws the same floors). Pure parts
# stand below `memory` (the handle); feature folders that carry requests out on a handle
# stand above it; the crate root re-exports them all.
FLOORS = [
    ["platform"],  # what differs between operating systems
    ["id"],  # the memory id
    ["codec", "clock", "time", "invalid", "in_call", "crypt", "contained"],  # bytes, time, bad requests, re-entry, keys, contained panics
    ["item", "error"],  # the memory item and the error type
    ["decay", "merge"],  # decay models, the policy, the kinetic queue; sync's merge rules
    ["store", "filter", "embedder", "error_code"],  # the database; filters; the model seam
    ["vocabulary", "lexical"],  # requests and answers; the BM25 index
    ["hooks", "catalog"],  # replaceable parts; the in-memory catalog
    ["options"],  # how a store is opened
    ["memory"],  # the handle
    ["retrieve", "transfer", "forget"],  # recall; export and import; sweeps and erasure
    ["context", "fuzzing"],  # contexts under a budget; fuzz entry points
    ["agent", "remember"],  # tasks, feedback, subjects; remember, update, forget
    ["conversation"],  # conversations
    ["sync"],  # sync between a user's devices: the merge rules
    ["operations"],  # the registry's answers and the one call every door goes through
]


def rel(path):
    return os.path.relpath(path, ROOT)


def code_of(path):
    """The file's text without comments, strings and its test module."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    # A string's escapes include a backslash before a line break (a string continued on the
    # next line).
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text, flags=re.S)
    return text


def rust_files(top):
    for dirpath, _, names in os.walk(top):
        for name in sorted(names):
            if name.endswith(".rs"):
                yield os.path.join(dirpath, name)


def module_of(path, src=ENGINE):
    """Module path segments of a crate's file: engine/src/a/b.rs -> ["a", "b"]."""
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def crate_root(src):
    """The crate root of a source folder: lib.rs, else main.rs."""
    lib = os.path.join(src, "lib.rs")
    return lib if os.path.isfile(lib) else os.path.join(src, "main.rs")


def file_of(segments, src=ENGINE):
    """The file defining the module at `segments` (the longest prefix that is a module) and
    how many segments it consumed."""
    best, used = crate_root(src), 0
    base = src
    for i, seg in enumerate(segments):
        as_file = os.path.join(base, seg + ".rs")
        as_dir = os.path.join(base, seg, "mod.rs")
        if os.path.isfile(as_file):
            best, used = as_file, i + 1
            base = os.path.join(base, seg)
        elif os.path.isfile(as_dir):
            best, used = as_dir, i + 1
            base = os.path.join(base, seg)
        else:
            break
    return best, used


def expand(tree):
    """Expands a use tree `a::{b, c::{d, e}}` into paths."""
    tree = tree.replace(" ", "").replace("\n", "")
    if "{" not in tree:
        return [tree]
    i = tree.index("{")
    prefix, inner = tree[:i], tree[i + 1 : tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for j, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:j])
            start = j + 1
    parts.append(inner[start:])
    out = []
    for p in parts:
        if p:
            out.extend(prefix + q for q in expand(p))
    return out


def reexports(path, code, src=ENGINE):
    """Names a `mod.rs` re-exports from its children: name -> module segments of the child."""
    me = module_of(path, src)
    out = {}
    for m in re.finditer(r"pub(?:\([a-z]+\))?\s+\buse\s+([^;]+);", code):
        for p in expand(m.group(1)):
            segs = [x for x in p.split(" as ")[0].split("::") if x]
            alias = p.split(" as ")[1] if " as " in p else segs[-1]
            if segs and segs[0] not in ("crate", "super", "self"):
                out[alias] = me + segs[:-1]
    return out


def references(path, code, src=ENGINE):
    """(absolute module segments, text) for every path into the crate the file names. A
    mod.rs's own re-exports are its interface, not its dependencies, and are skipped."""
    me = module_of(path, src)
    is_mod = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
    found = []
    for m in re.finditer(r"(pub(?:\([a-z]+\))?\s+)?\buse\s+([^;]+);", code):
        if m.group(1) and is_mod:
            continue
        found.extend(expand(m.group(2)))
    # Paths written inline: crate::a::b(...), super::x::Y.
    found.extend(m.group(1) for m in re.finditer(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", code))
    out = []
    for p in found:
        segs = [s for s in p.split(" as ")[0].split("::") if s]
        if not segs:
            continue
        if segs[0] == "crate":
            absolute = segs[1:]
        elif segs[0] in ("super", "self"):
            base = list(me)
            if segs[0] == "self":
                segs = segs[1:]
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            absolute = base + segs
        elif is_mod and (
            os.path.isfile(os.path.join(src, *me, segs[0] + ".rs"))
            or os.path.isfile(os.path.join(src, *me, segs[0], "mod.rs"))
        ):
            absolute = me + segs  # `use child::X` in a mod.rs
        else:
            continue
        out.append((absolute, p))
    return out


def resolve(absolute, exported, src=ENGINE):
    """The file defining what `absolute` names, following mod.rs re-exports."""
    for _ in range(8):
        target, used = file_of(absolute, src)
        rest = absolute[used:]
        if rest and rest[0] in exported.get(target, {}):
            absolute = exported[target][rest[0]] + rest
            continue
        return target, rest
    return target, rest


def find_cycles(files, edges):
    """Every cycle the DFS meets, as "a -> b -> a" texts."""
    found = []
    colour = {p: 0 for p in files}
    for start in files:
        if colour[start]:
            continue
        stack = [(start, iter(sorted(edges[start])))]
        colour[start] = 1
        trail = [start]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                trail.pop()
                continue
            if colour[nxt] == 1:
                cycle = trail[trail.index(nxt) :] + [nxt]
                found.append(" -> ".join(rel(c) for c in cycle))
            elif colour[nxt] == 0:
                colour[nxt] = 1
                trail.append(nxt)
                stack.append((nxt, iter(sorted(edges[nxt]))))
    return found


def file_edges(src):
    """A crate's files and the files each imports, as written: an import through a folder's
    `mod.rs` (its re-exports) is an edge to that `mod.rs` too, since the folder's face loads
    everything the folder holds. Tests are left out."""
    files = [p for p in rust_files(src) if os.path.basename(p) != "tests.rs"]
    edges = {p: set() for p in files}
    root = crate_root(src)
    for path in files:
        if path == root:
            continue
        code = code_of(path)
        for absolute, _ in references(path, code, src):
            target, used = file_of(absolute, src)
            if target != path and target in edges and target != root:
                edges[path].add(target)
    return files, edges


def workspace_sources():
    """Every crate's source folder: the workspace's members (Cargo.toml), each `src/`."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        manifest = f.read()
    members = re.search(r"members\s*=\s*\[([^\]]*)\]", manifest)
    names = re.findall(r'"([^"]+)"', members.group(1)) if members else []
    found = [f"{m}/src" for m in names if os.path.isdir(os.path.join(ROOT, m, "src"))]
    assert "engine/src" in found, "the workspace's members were not read from Cargo.toml"
    return found


def main():
    problems = []

    # 5. No circle between files anywhere in the workspace, counted as the imports are written.
    written = {}  # crate source folder -> (files, imports as written), rule 6 reads the engine's
    for top in workspace_sources():
        src = os.path.join(ROOT, top)
        files, edges = written[top] = file_edges(src)
        for cycle in find_cycles(files, edges):
            problems.append("file cycle: " + cycle)

    # 1. redb only in store/.
    store_dir = os.path.join(ENGINE, "store") + os.sep
    for top in ("engine/src", "cli/src", "ffi/src", "wasm/src", "benches/src"):
        for path in rust_files(os.path.join(ROOT, top)):
            if path.startswith(store_dir):
                continue
            if re.search(r"\bredb\b", code_of(path)):
                problems.append(f"{rel(path)} names redb; only engine/src/store/ may")

    # 2-4. The module graph.
    files = [p for p in rust_files(ENGINE) if os.path.basename(p) != "tests.rs"]
    lib = os.path.join(ENGINE, "lib.rs")
    memory_files = {p for p in files if module_of(p)[:1] == ["memory"]}
    edges = {p: set() for p in files}
    codes = {p: code_of(p) for p in files}
    exported = {
        p: reexports(p, codes[p]) for p in files if os.path.basename(p) in ("mod.rs", "lib.rs")
    }
    exported.pop(lib, None)  # the crate root's re-exports are for users, not for the engine
    for path in files:
        if path == lib:
            continue  # the façade's public re-exports
        code = codes[path]
        extends_handle = (
            re.search(r"\bimpl\s+(Memory|Inner)\b", code) is not None
            or re.search(r":\s*&(?:'\w+\s+)?(?:mut\s+)?(Memory|Inner)\b", code) is not None
        )
        for absolute, text in references(path, code):
            target, rest = resolve(absolute, exported)
            if target == lib and rest:
                problems.append(
                    f"{rel(path)}: `{text}` imports through the crate root; import it from "
                    "the module that defines it"
                )
                continue
            if target == path or target not in edges:
                continue
            if target in memory_files and path not in memory_files and not extends_handle:
                problems.append(
                    f"{rel(path)}: `{text}` imports the memory façade, but the file does not "
                    "work on it (no `impl Memory` / `impl Inner`, no `&Inner` / `&Memory` parameter)"
                )
            edges[path].add(target)

    for cycle in find_cycles(files, edges):
        problems.append("module cycle: " + cycle)

    # 6. Every import points down the engine's floors.
    floor = {part: i for i, parts in enumerate(FLOORS) for part in parts}
    written_files, written_edges = written["engine/src"]
    for path in written_files:
        if path == lib:
            continue
        mine = module_of(path)[0]
        if mine not in floor:
            problems.append(f"{rel(path)}: the part `{mine}` has no floor in FLOORS")
            continue
        for target in sorted(written_edges[path]):
            theirs = module_of(target)[0]
            if theirs == mine:
                continue
            if floor.get(theirs, len(FLOORS)) >= floor[mine]:
                problems.append(
                    f"{rel(path)} imports {rel(target)}: `{theirs}` is not below `{mine}` "
                    "(scripts/check-layers.py FLOORS)"
                )

    if problems:
        print("engine layering check failed:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    n_edges = sum(len(e) for e in edges.values())
    print(
        f"engine layering: {len(files)} files, {n_edges} imports, no cycle, every import "
        f"down {len(FLOORS)} floors, redb only in store/; no file cycle in any of the "
        f"{len(written)} crates ({', '.join(t.split('/')[0] for t in written)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
