"""Exports and pictures: meshio volumes, boundary surfaces, raw arrays,
matplotlib PNGs and a self-contained plotly HTML view.

:func:`export` picks the writer from the file name's extension:

* ``.vtu .vtk .msh .xdmf .mesh`` — the tetrahedra through meshio, with cell
  data ``volume``, ``component`` and ``cells_listing``; with ``grid=True`` (or
  a name ending ``.grid.<ext>``, e.g. ``grid.grid.vtu``) the grid as hexahedra
  with ``ref_count`` / ``occupied`` instead.
* ``.obj .ply .stl`` — the outward-facing boundary surface (also ``.vtu .vtk``
  with ``surface=True``); ``groups=True`` splits it per asteroid and per box
  wall, ``units='km'`` writes kilometres.
* ``.npz`` — every array; ``.json`` — the header plus every array as lists.
* ``.png`` — :func:`regn.export.render.render`; ``.html`` — :func:`regn.export.view.write_html`.

Every writer is atomic (temporary file in the destination directory, then a
rename) and raises :class:`regn.errors.ExportError` with one line on an
unknown extension or an unwritable path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

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


def export(mesh, path, *, grid=None, surface=False, groups=False, units="m") -> str:
    """Write ``mesh`` to ``path`` in the format its extension names.

    ``surface`` writes the boundary surface to .vtu/.vtk instead of the
    tetrahedra; ``groups`` and ``units`` apply to surfaces (see
    :func:`regn.export.surface.write_surface`). Returns the kind written
    ('volume', 'grid', 'surface', 'data', 'png', 'html').
    """
    ext = extension(path)
    if grid is None:
        grid = is_grid_name(path)
    if grid and ext not in VOLUME_EXTS:
        raise ExportError(f"{os.fspath(path)}: the grid can only be written as "
                          f"{' '.join(VOLUME_EXTS)}")
    from .surface import MESHIO_SURFACE_EXTS, write_surface
    if surface and ext not in SURFACE_EXTS + MESHIO_SURFACE_EXTS:
        raise ExportError(f"{os.fspath(path)}: the surface is written as "
                          f"{' '.join(SURFACE_EXTS + MESHIO_SURFACE_EXTS)}")
    if ext in SURFACE_EXTS or surface:
        write_surface(mesh, path, groups=groups, units=units)
        return "surface"
    if groups or unit_scale(units) != 1.0:
        raise ExportError(f"{os.fspath(path)}: groups and units apply to the boundary "
                          f"surface ({' '.join(SURFACE_EXTS)}, or .vtu/.vtk written as a "
                          "surface: --surface)")
    if ext in VOLUME_EXTS:
        from .meshio_io import write_grid, write_volume
        (write_grid if grid else write_volume)(mesh, path)
        return "grid" if grid else "volume"
    if ext in DATA_EXTS:
        from .data import write_data
        write_data(mesh, path)
        return "data"
    if ext == ".png":
        from .render import render
        render(mesh, path)
        return "png"
    if ext == ".html":
        from .view import write_html
        write_html(mesh, path)
        return "html"
    raise ExportError(unknown_extension_message(path))


def unknown_extension_message(path) -> str:
    ext = extension(path) or "(none)"
    return (f"{os.fspath(path)}: unknown extension {ext}; use one of "
            f"{' '.join(ALL_EXTS)}")


# --- atomic output (temporary file in the destination directory, then os.replace)


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
    from ..format.writer import atomic_write
    check_dir(path)
    try:
        atomic_write(path, payload)
        _default_mode(path)
    except OSError as e:
        raise ExportError(f"{os.fspath(path)}: cannot write: {e.strerror or e}") from None


@contextlib.contextmanager
def temp_path(path):
    """Yield a temporary path in ``path``'s directory with the same suffix;
    on success it is renamed onto ``path``, on failure removed."""
    path = os.fspath(path)
    directory = check_dir(path)
    suffix = os.path.splitext(path)[1]
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                                   suffix=suffix, dir=directory)
    except OSError as e:
        raise ExportError(f"{path}: cannot write: {e.strerror or e}") from None
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
        _default_mode(path)
    except OSError as e:
        _unlink(tmp)
        raise ExportError(f"{path}: cannot write: {e.strerror or e}") from None
    except BaseException:
        _unlink(tmp)
        raise


def _default_mode(path):
    """mkstemp makes 0600 files; give the result the usual umask-based mode."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def _unlink(p):
    try:
        os.unlink(p)
    except OSError:
        pass


__all__ = ["export", "extension", "is_grid_name", "unit_scale", "ALL_EXTS", "VOLUME_EXTS",
           "SURFACE_EXTS", "DATA_EXTS", "PATH_EXTS", "UNITS"]
