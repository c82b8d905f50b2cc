"""regn — read, check, query, build and draw REGN navigation meshes.

A REGN object is the tetrahedral navigation mesh of one stage of a console
space-combat title: vertices, tetrahedra, faces with full adjacency,
per-tetrahedron portal costs, and a uniform grid for point location, stored as
a big-endian chunk relocated through a POF0 table.

The public API is imported lazily so that ``regn --help`` stays fast.
"""

from __future__ import annotations

import importlib as _importlib

__version__ = "0.1.0"

_API = {
    "load": "regn.io", "loads": "regn.io", "save": "regn.io",
    "Mesh": "regn.mesh",
    "build": "regn.builder.tetmesh",
    "generate": "regn.world.entry",
    "verify": "regn.checks",
    "from_meshio": "regn.builder.from_meshio",
    "QueryFilter": "regn.query.paths.filters",
    "Crowd": "regn.crowd.crowd",
    "RegnError": "regn.errors", "FormatError": "regn.errors",
    "LimitError": "regn.errors", "BuildError": "regn.errors",
    "QueryError": "regn.errors", "ExportError": "regn.errors",
}

__all__ = sorted(_API)


def __getattr__(name):
    if name in _API:
        value = getattr(_importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'regn' has no attribute {name!r}")


def __dir__():
    # The public names only (not this module's own imports), for completion.
    return sorted(set(_API) | {"__version__"})
