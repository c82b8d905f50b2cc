"""The shape of the code: no import cycles, no function over ~100 lines, the
byte layout known only in ``regn/format/``.

Each test reads the sources with ``ast`` (nothing is imported or run); they
are read and parsed once for all of them. The
short lists of exceptions name code that another branch of issue 15 is
rewriting; each entry must still be an offender, so the lists can only
shrink: after a merge fixes one, delete its entry.
"""

import ast
import functools
import re
from pathlib import Path

import regn

SRC = Path(regn.__file__).parent

#: Import edges that close a cycle today (none left: the exporters import their
#: helpers from ``regn.export._files``, not from the package that dispatches to them).
PENDING_IMPORT_EDGES = set()

MAX_FUNCTION_LINES = 100
#: Functions over the limit (none left).
PENDING_LONG_FUNCTIONS = set()

#: Record strides that stand out in arithmetic (tetrahedron, face, cell item
#: records); smaller ones (12, 8, 4) are too common to tell apart.
STRIDES = {96, 48, 32}
#: Modules outside regn/format/ that still spell out a stride or float bits
#: (none left).
PENDING_LAYOUT_MODULES = set()


@functools.cache
def _parsed():
    """Path -> (text, every ast node of it) for every module of regn, read
    and parsed once for all the tests of this file."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        out[path] = (text, list(ast.walk(ast.parse(text, str(path)))))
    return out


def _modules():
    """Dotted module name -> (path, is_package) for every module of regn."""
    out = {}
    for path in _parsed():
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    return out


def _imports(name, path, is_pkg, modules):
    """The regn modules ``name`` imports anywhere in its file (at the top or
    inside functions). ``from P import x`` counts as P.x when that is a
    module, else as P; a string naming a module (``importlib``, a lazy
    attribute table) counts too."""
    package = name if is_pkg else name.rpartition(".")[0]
    found = set()
    for node in _parsed()[path][1]:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    found.add(f"{target}.{alias.name}")
                elif target in modules:
                    found.add(target)
        elif isinstance(node, ast.Constant) and node.value in modules:
            found.add(node.value)
    found.discard(name)
    return found


def import_graph():
    """Module -> the regn modules it imports (a fresh copy each call)."""
    return {name: set(found) for name, found in _import_graph().items()}


@functools.cache
def _import_graph():
    modules = _modules()
    return {name: frozenset(_imports(name, path, is_pkg, modules))
            for name, (path, is_pkg) in modules.items()}


def _cycle_through(graph, start):
    """One import cycle through ``start`` as a list of modules, or None."""
    path, seen = [start], {start}

    def walk(node):
        for nxt in sorted(graph[node]):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                path.append(nxt)
                found = walk(nxt)
                if found:
                    return found
                path.pop()
        return None
    return walk(start)


def test_import_graph_sees_function_level_imports():
    graph = import_graph()
    assert "regn.query.locating.locate" in graph["regn.mesh"]          # inside Mesh.locate
    assert "regn.builder.tetmesh" in graph["regn"]           # the lazy API table
    assert "regn.geometry._cell_kernels" in graph["regn.geometry.grid"]


def test_no_import_cycles():
    graph = import_graph()
    for a, b in PENDING_IMPORT_EDGES:
        assert b in graph[a], f"{a} no longer imports {b}: drop it from PENDING_IMPORT_EDGES"
        graph[a].discard(b)
    cycles = {" -> ".join(c) for c in (_cycle_through(graph, m) for m in graph) if c}
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))


def _functions():
    """'regn/path.py:name' -> lines, for every function and method."""
    out = {}
    for path, (_, nodes) in _parsed().items():
        rel = path.relative_to(SRC.parent).as_posix()
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                key = f"{rel}:{node.name}"
                out[key] = max(out.get(key, 0), node.end_lineno - node.lineno + 1)
    return out


def test_no_function_over_100_lines():
    lines = _functions()
    long = {f: n for f, n in lines.items() if n > MAX_FUNCTION_LINES}
    unexpected = {f: n for f, n in long.items() if f not in PENDING_LONG_FUNCTIONS}
    assert not unexpected, f"functions over {MAX_FUNCTION_LINES} lines: {unexpected}"
    fixed = PENDING_LONG_FUNCTIONS - set(long)
    assert not fixed, f"no longer over the limit, drop from the list: {sorted(fixed)}"


def _layout_literals(path):
    """Hand-written float32 bit patterns and stride arithmetic in a module."""
    text, nodes = _parsed()[path]
    found = [m.group(0) for m in re.finditer(r"0x3f800000|1065353216", text, re.I)]
    for node in nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv,
                                                                ast.Mod)):
            for side in (node.left, node.right):
                if (isinstance(side, ast.Constant) and type(side.value) is int
                        and side.value in STRIDES):
                    found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_byte_layout_only_in_format():
    offenders = {}
    for path in _parsed():
        rel = path.relative_to(SRC.parent).as_posix()
        if not rel.startswith("regn/format/"):
            found = _layout_literals(path)
            if found:
                offenders[rel] = found
    unexpected = {m: f for m, f in offenders.items() if m not in PENDING_LAYOUT_MODULES}
    assert not unexpected, f"byte layout outside regn/format/: {unexpected}"
    fixed = PENDING_LAYOUT_MODULES - set(offenders)
    assert not fixed, f"clean now, drop from the list: {sorted(fixed)}"


def test_the_package_shows_only_its_public_names():
    # Tab completion on ``regn.`` offers the API, not the module's own imports.
    assert dir(regn) == sorted(set(regn.__all__) | {"__version__"})
    assert all(callable(getattr(regn, name)) for name in regn.__all__)
