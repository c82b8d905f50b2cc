"""A kernel's cache entry is stale when any source it was compiled from changed.

numba keys a cached kernel on its own file's contents only. A regn kernel
also holds code and constants from other files: the helpers it calls (in
other ``_*_kernels.py`` modules) are compiled into it, and the module-level
constants it reads (``regn.tolerances``, ``regn.format.layout`` ...) are
frozen into its machine code. Editing such a file (by hand in an editable
install, or through ``git pull``, which leaves the unchanged files alone)
would leave every caller's cache entry looking fresh, running the old code.

:func:`install` puts regn's own cache locators in front of numba's: for a
file inside the regn package they place the cache where numba would (the
``NUMBA_CACHE_DIR`` folder, else ``__pycache__`` beside the file, else the
user-wide numba cache) and stamp it with a hash of the module's dotted name
and contents *and those of every regn module it imports, transitively*. A
changed, added or moved dependency therefore invalidates exactly the kernel
files that use it; nothing else is recompiled. Files outside regn are left to
numba's own locators.
"""

from __future__ import annotations

import hashlib
import os
import re

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT = os.path.dirname(_PACKAGE)
#: ``from .x import y``, ``from ..a.b import c``, ``from regn.a import b``, and
#: ``import regn.a``: the regn modules a file may take code or constants from
_IMPORT = re.compile(r"^\s*from\s+(\.+[\w.]*|regn[\w.]*)\s+import\s+([\w, ()]+)|"
                     r"^\s*import\s+(regn[\w.]*)", re.M)
#: modules that hold no code compiled into a kernel (how kernels are compiled,
#: cached and packed): left out of every stamp, so editing them voids no
#: cache entry and no kernel pack
_NOT_KERNEL_CODE = ("regn.compiling", "regn._first_compile")
_STAMPS: dict = {}
_READ: dict = {}


def _module_of(path):
    rel = os.path.relpath(os.path.splitext(path)[0], _ROOT)
    parts = rel.split(os.sep)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_of(module):
    """The .py file of regn module ``module`` (a package: its __init__), or None."""
    base = os.path.join(_ROOT, *module.split("."))
    for f in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(f):
            return f
    return None


def _read(path):
    """(contents, the regn module files it imports), read once a process."""
    if path not in _READ:
        with open(path, "rb") as f:
            data = f.read()
        _READ[path] = data, _imports(path, data.decode("utf-8", "replace"))
    return _READ[path]


def _imports(path, text):
    """The regn module files ``path`` (of contents ``text``) imports."""
    here = _module_of(path).split(".")
    if not path.endswith("__init__.py"):
        here = here[:-1]                       # the package the module is in
    found = []
    for rel, names, plain in _IMPORT.findall(text):
        if plain:
            found.append(_file_of(plain))
            continue
        if rel.startswith("."):
            dots = len(rel) - len(rel.lstrip("."))
            base = here[:len(here) - dots + 1] + [p for p in rel.lstrip(".").split(".") if p]
        else:
            base = rel.split(".")
        found.append(_file_of(".".join(base)))
        for name in re.findall(r"\w+", names):       # ``from . import module``
            found.append(_file_of(".".join(base + [name])))
    return [f for f in found if f and not _module_of(f).startswith(_NOT_KERNEL_CODE)]


def source_stamp(path) -> str:
    """A hash of regn module ``path`` and every regn module it imports,
    transitively (names and contents)."""
    path = os.path.abspath(path)
    if path in _STAMPS:
        return _STAMPS[path]
    seen, todo = set(), [path]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(_read(p)[1])
    h = hashlib.sha256()
    for p in sorted(seen):
        h.update(_module_of(p).encode() + b"\0" + _read(p)[0] + b"\0")
    _STAMPS[path] = h.hexdigest()
    return _STAMPS[path]


def _ours(py_file) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(py_file), _PACKAGE]) == _PACKAGE
    except ValueError:                         # another drive
        return False


def install() -> None:
    """Put regn's locators first in numba's list (once per process)."""
    from numba.core import caching as C
    if any(getattr(c, "_regn", False) for c in C.CacheImpl._locator_classes):
        return

    class _Stamped:
        _regn = True

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _ours(py_file):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return source_stamp(self._py_file)

    made = [type(f"Regn{base.__name__}", (_Stamped, base), {})
            for base in (C.UserProvidedCacheLocator, C.InTreeCacheLocator,
                         C.UserWideCacheLocator)]
    C.CacheImpl._locator_classes[:0] = made
