"""A world written out and drawn: one volume file of every tile, a picture
and an interactive page of the tiles and a path across them.

* :func:`export_world` writes every tile's tetrahedra into one volume file
  (.vtu .vtk .msh .xdmf .mesh, through meshio), so ParaView opens the
  whole world at once; cell data ``tile`` (the tile's number in the
  manifest), ``volume`` and ``component`` (connected parts of each tile,
  numbered across the world). Tiles are read one after another, within
  the world's ``max_tiles``.
* :func:`render_world` draws a PNG: the tile boxes in 3D and seen from
  above, each tile shaded by its tetrahedra (from the manifest: dense
  where rocks are, no tile read), with a path across tiles and points.
* :func:`view_world` writes the same as a self-contained plotly page.
"""

from __future__ import annotations

import html
import os

import numpy as np

from ..errors import ExportError
from ..export._files import VOLUME_EXTS, extension, write_bytes
from ..units import unit_of


# --- export -----------------------------------------------------------------------------
def world_to_meshio(world):
    """Every tile's tetrahedra as one ``meshio.Mesh`` (see the module docstring)."""
    import meshio
    points, cells, tile, volume, comp = [], [], [], [], []
    n_points = n_comp = 0
    for i in range(world.n_tiles):
        mesh = world.tile(i)
        v = np.asarray(mesh.vertices, np.float64)
        points.append(v)
        cells.append(np.asarray(mesh.tets, np.int64) + n_points)
        tile.append(np.full(mesh.n_tets, i, np.int64))
        volume.append(np.asarray(mesh.tet_volumes, np.float64))
        lab = np.asarray(mesh.components(), np.int64)
        comp.append(lab + n_comp)
        n_points += len(v)
        n_comp += int(lab.max()) + 1 if len(lab) else 0
    return meshio.Mesh(np.concatenate(points), [("tetra", np.concatenate(cells))],
                       cell_data={"tile": [np.concatenate(tile)],
                                  "volume": [np.concatenate(volume)],
                                  "component": [np.concatenate(comp)]})


def export_world(world, out) -> str:
    """Write the world to ``out`` (a volume format, by its extension)."""
    if extension(out) not in VOLUME_EXTS:
        raise ExportError(f"{os.fspath(out)}: a world is exported as one volume file of "
                          f"all its tiles: {' '.join(VOLUME_EXTS)} (a tile's .rgn exports "
                          "to the other formats)")
    from ..export.meshio_io import _write
    _write(world_to_meshio(world), out)
    return "volume"


# --- drawing ------------------------------------------------------------------------------
def _box_segments(lo, hi):
    """(12,2,3) the edges of a box."""
    c = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                  for z in (lo[2], hi[2])])
    pairs = [(a, b) for a in range(8) for b in range(a + 1, 8)
             if (a ^ b).bit_count() == 1]
    return np.array([[c[a], c[b]] for a, b in pairs])


def _tile_density(world):
    """(nx, ny) tetrahedra in each column of tiles seen from above."""
    m = world.manifest
    nx, ny, _ = m.grid
    out = np.zeros((nx, ny))
    for t in m.tiles:
        out[t.index[0], t.index[1]] += t.tets
    return out


def figure(world, *, path=None, points=None, size=(1200, 600), dpi=100, title=None):
    """A matplotlib figure: the tiles in 3D and from above, a path, points."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..export.render import route_parts
    m = world.manifest
    unit = unit_of(world)               # metres for a level's world, km for a field's
    per_unit = unit.metres
    fig = plt.figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")
    for t in m.tiles:
        for a, b in _box_segments(t.lo / per_unit, t.hi / per_unit):
            ax3.plot(*zip(a, b), color="0.45", lw=0.5)
    top = fig.add_subplot(1, 2, 2)
    planes = world.grid.planes
    dens = _tile_density(world)
    im = top.pcolormesh(planes[0] / per_unit, planes[1] / per_unit, dens.T, cmap="Greys", alpha=0.6)
    fig.colorbar(im, ax=top, label="tetrahedra per column of tiles")
    pts, _, said = route_parts(path, unit) if path is not None else (None, None, None)
    if pts is not None:
        p = pts / per_unit
        ax3.plot(p[:, 0], p[:, 1], p[:, 2], color="tab:red", lw=1.5, label="path")
        top.plot(p[:, 0], p[:, 1], color="tab:red", lw=1.5, label="path")
        for ax, q in ((ax3, p[[0, -1]]), (top, p[[0, -1], :2])):
            ax.scatter(*q.T, c=["tab:green", "tab:blue"], s=25, zorder=3)
    if points is not None and len(points):
        q = np.asarray(points, np.float64) / per_unit
        ax3.scatter(q[:, 0], q[:, 1], q[:, 2], s=4, c="tab:orange")
        top.scatter(q[:, 0], q[:, 1], s=4, c="tab:orange")
    for ax in (ax3, top):
        ax.set_xlabel(f"x ({unit.name})")
        ax.set_ylabel(f"y ({unit.name})")
    ax3.set_zlabel(f"z ({unit.name})")
    top.set_aspect("equal")
    top.set_title("seen from above", fontsize=9)
    name = os.path.basename(m.path or "world")
    fig.suptitle(title or f"{name}: {world.n_tiles} tiles {'x'.join(map(str, m.grid))}"
                 + (f"; {said}" if said else ""), fontsize=10)
    return fig


def render_world(world, out, **kwargs) -> None:
    """Draw the world (:func:`figure`) to the PNG ``out``, atomically."""
    from ..export.render import png_bytes
    if not os.fspath(out).lower().endswith(".png"):
        raise ExportError(f"{os.fspath(out)}: pictures are written as .png")
    fig = figure(world, **kwargs)
    try:
        write_bytes(out, png_bytes(fig))
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def view_figure(world, *, path=None, points=None, title=None):
    """A plotly figure of the tile boxes, a path and points."""
    import plotly.graph_objects as go

    from ..export.render import route_parts
    m = world.manifest
    unit = unit_of(world)               # metres for a level's world, km for a field's
    per_unit = unit.metres
    seg = np.concatenate([_box_segments(t.lo / per_unit, t.hi / per_unit) for t in m.tiles])
    lines = np.full((len(seg) * 3, 3), np.nan)
    lines[0::3], lines[1::3] = seg[:, 0], seg[:, 1]
    traces = [go.Scatter3d(x=lines[:, 0], y=lines[:, 1], z=lines[:, 2], mode="lines",
                           line={"color": "rgb(170,170,170)", "width": 1}, name="tiles",
                           hoverinfo="skip")]
    pts, _, said = route_parts(path, unit) if path is not None else (None, None, None)
    if pts is not None:
        p = pts / per_unit
        traces.append(go.Scatter3d(x=p[:, 0], y=p[:, 1], z=p[:, 2], mode="lines+markers",
                                   line={"color": "red", "width": 5}, marker={"size": 2},
                                   name=said))
    if points is not None and len(points):
        q = np.asarray(points, np.float64) / per_unit
        traces.append(go.Scatter3d(x=q[:, 0], y=q[:, 1], z=q[:, 2], mode="markers",
                                   marker={"size": 2, "color": "orange"}, name="points"))
    name = os.path.basename(m.path or "world")
    fig = go.Figure(traces)
    fig.update_layout(title=title or f"{name}: {world.n_tiles} tiles "
                      f"{'x'.join(map(str, m.grid))}" + (f"; {said}" if said else ""),
                      scene={"aspectmode": "data", "xaxis_title": f"x ({unit.name})",
                             "yaxis_title": f"y ({unit.name})",
                             "zaxis_title": f"z ({unit.name})"})
    return fig


def view_world(world, out, **kwargs) -> None:
    """Write the interactive page (:func:`view_figure`) to ``out``, atomically."""
    if not os.fspath(out).lower().endswith((".html", ".htm")):
        raise ExportError(f"{os.fspath(out)}: the interactive view is written as .html")
    fig = view_figure(world, **kwargs)
    page = fig.to_html(include_plotlyjs=True, full_html=True,
                       config={"displaylogo": False, "responsive": True},
                       default_height="100vh", default_width="100%")
    head = (f"<head><title>{html.escape(fig.layout.title.text or 'regn world')}</title>"
            "<style>html, body {height: 100%; margin: 0; overflow: hidden}</style>")
    write_bytes(out, page.replace("<head>", head, 1).encode("utf-8"))
