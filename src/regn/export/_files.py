"""Output file names and atomic writing for the exporters.

Every exporter writes through :func:`write_bytes` or :func:`temp_path`
(:mod:`regn._atomic` underneath: a temporary file in the destination
directory, then a rename), and an unwritable path is one
:class:`~regn.errors.ExportError` line. This module imports nothing else of
:mod:`regn.export`, so every exporter can import it (and the package can
re-export it) without an import cycle.
"""

from __future__ import annotations

import contextlib
import os

from .. import _atomic
from ..errors import ExportError

VOLUME_EXTS = (".vtu", ".vtk", ".msh", ".xdmf", ".mesh")
SURFACE_EXTS = (".obj", ".ply", ".stl")
DATA_EXTS = (".npz", ".json")
PICTURE_EXTS = (".png", ".html")
ALL_EXTS = VOLUME_EXTS + SURFACE_EXTS + DATA_EXTS + PICTURE_EXTS
#: What a path polyline is written as (:func:`regn.export.polyline.write_path`).
PATH_EXTS = (".vtp", ".csv", ".obj", ".ply", ".json")
#: Length units a surface or a path can be written in: metres per unit.
UNITS = {"m": 1.0, "km": 1000.0}


def unit_scale(units) -> float:
    """Metres per unit of ``units`` ('m' or 'km'); ExportError otherwise."""
    if units not in UNITS:
        raise ExportError(f"unknown units {units!r}; use one of {', '.join(UNITS)}")
    return UNITS[units]


def extension(path) -> str:
    """The lower-case extension of ``path`` ('' if none)."""
    return os.path.splitext(os.fspath(path))[1].lower()


def is_grid_name(path) -> bool:
    """True for names like ``out.grid.vtu`` (the grid-export convention)."""
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return stem.lower().endswith(".grid")


def check_dir(path) -> str:
    """The destination directory of ``path``; ExportError if it is not writable."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ExportError(f"{path}: cannot write: directory {directory} does not exist")
    if os.path.isdir(path):
        raise ExportError(f"{path}: cannot write: it is a directory")
    return directory


def write_bytes(path, payload: bytes) -> None:
    """Write bytes atomically; OSError becomes one-line ExportError."""
    check_dir(path)
    try:
        _atomic.atomic_write(path, payload)
    except OSError as e:
        raise ExportError(f"{os.fspath(path)}: cannot write: {e.strerror or e}") from None


@contextlib.contextmanager
def temp_path(path):
    """Yield a temporary file name beside ``path`` for a writer that needs a
    name (meshio); on success it is renamed onto ``path``, on failure removed.
    OSError becomes one-line ExportError."""
    check_dir(path)
    try:
        with _atomic.temp_path(path) as tmp:
            yield tmp
    except OSError as e:
        raise ExportError(f"{os.fspath(path)}: cannot write: {e.strerror or e}") from None
