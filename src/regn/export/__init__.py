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

import os

from ..errors import ExportError
# (the exporters import these from ._files; the names stay here for callers)
from ._files import (ALL_EXTS, DATA_EXTS, PATH_EXTS, PICTURE_EXTS,  # noqa: F401
                     SURFACE_EXTS, UNITS, VOLUME_EXTS, check_dir, extension,
                     is_grid_name, temp_path, unit_scale, write_bytes)


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


__all__ = ["export", "extension", "is_grid_name", "unit_scale", "ALL_EXTS", "VOLUME_EXTS",
           "SURFACE_EXTS", "DATA_EXTS", "PATH_EXTS", "UNITS"]
