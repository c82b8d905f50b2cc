"""Pictures of a mesh as PNG (matplotlib, Agg, no pyplot state).

Views (``view=``):

* ``3d`` — the boundary surface: the obstacles (rocks, walls) as shaded solids, the
  box as a wireframe (its wall triangles are not drawn);
* ``grid`` — top view of grid occupancy: tetrahedra listed per cell summed
  (or ``grid_reduce='max'``) over z, as a heat map with a colour bar;
* ``slice`` — a cross-section at ``slice=('z', value)`` (or x/y): every
  tetrahedron cut by the plane as its polygon, coloured by component;
* ``all`` — the four panels 3D, grid, the slice, and a perpendicular slice.

Axes are in metres for a map under 10 km, km for a larger one
(:mod:`regn.units`). ``path=(start, goal)`` overlays the route of
``mesh.find_path`` (points and corridor) — or pass the path result itself;
``points=`` overlays points.
"""

from __future__ import annotations

import io
import os
import re

import numpy as np

from ..errors import ExportError
from ..geometry import TET_EDGES as _EDGES
from ..units import KILOMETRES, unit_of
from ._files import write_bytes

VIEWS = ("3d", "grid", "slice", "all")
_AXES = "xyz"
KM = 1000.0
#: Colours of a path and its two ends, in the pictures and the HTML view alike.
PATH_COLOUR, START_COLOUR, GOAL_COLOUR = "#dc143c", "#1a9641", "#2b6cd6"


# --- inputs --------------------------------------------------------------------
def parse_slice(text):
    """'z=1500' / 'x=-2.5km' / ('z', 1500.0) -> (axis index, value in metres)."""
    if isinstance(text, (tuple, list)):
        axis, value = text
        axis = _AXES.index(axis) if isinstance(axis, str) else int(axis)
        return axis, float(value)
    m = re.fullmatch(r"\s*([xyzXYZ])\s*=\s*([-+0-9.eE]+)\s*(km|m)?\s*", str(text))
    if not m:
        raise ExportError(f"--slice {text!r}: expected AXIS=VALUE, e.g. z=0 or "
                          "y=-12.5km (metres unless 'km')")
    try:
        value = float(m.group(2))
    except ValueError:
        raise ExportError(f"--slice {text!r}: {m.group(2)!r} is not a number") from None
    return _AXES.index(m.group(1).lower()), value * (KM if m.group(3) == "km" else 1.0)


def route(mesh, start, goal):
    """(points (N,3) or None, corridor tets (K,) or None, note) of the path from
    ``mesh.find_path``; ExportError if the path query is not available."""
    try:
        from ..query.paths.path import find_path  # noqa: F401  (availability check)
    except ImportError as e:
        raise ExportError(f"--path needs regn.query.paths.path.find_path, which is not "
                          f"available in this build ({e})") from None
    return route_parts(mesh.find_path(np.asarray(start, float), np.asarray(goal, float)),
                       unit_of(mesh))


def route_parts(res, unit=KILOMETRES):
    """(points, corridor, note) from a path result (``.points``, ``.tets``,
    ``.found``, ``.status``), an (N,3) array or a (points, tets) pair; the
    note tells the length in ``unit`` (:mod:`regn.units`)."""
    pts = _field(res, ("points", "waypoints", "path"))
    if pts is None and isinstance(res, np.ndarray):
        pts = res
    if pts is None and isinstance(res, (tuple, list)) and len(res):
        pts = res[0]
    corridor = _field(res, ("corridor", "tets", "tet_path"))
    if corridor is None and isinstance(res, (tuple, list)) and len(res) > 1:
        corridor = res[1]
    found = _field(res, ("found", "ok", "success"))
    status = _field(res, ("status",))
    pts = None if pts is None else np.asarray(pts, float).reshape(-1, 3)
    corridor = None if corridor is None else np.asarray(corridor, np.int64).ravel()
    if found is False or pts is None or len(pts) == 0:
        return None, corridor, f"no path ({status})" if status else "no path"
    length = float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())
    return pts, corridor, f"path {unit.length(length)}, {len(pts)} points"


def _field(obj, names):
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if hasattr(obj, n) and not callable(getattr(obj, n)):
            return getattr(obj, n)
    return None


# --- geometry for the pictures ---------------------------------------------------
def cross_section(tet_points, axis, value):
    """Cut tetrahedra by the plane coordinate[axis] == value.

    Returns (tet indices (K,), polygons: list of (3|4, 2) arrays in the two
    other coordinates, vertices in order around the polygon).
    """
    p = np.asarray(tet_points, dtype=np.float64)
    if len(p) == 0:
        return np.zeros(0, np.int64), []
    d = p[:, :, axis] - value
    span = float(np.max(np.abs(p[:, :, axis]))) or 1.0
    d = np.where(d == 0, 1e-12 * span, d)            # a vertex on the plane counts as above
    cut = np.flatnonzero((d.min(axis=1) < 0) & (d.max(axis=1) > 0))
    if len(cut) == 0:
        return cut, []
    pc, dc = p[cut], d[cut]
    i, j = _EDGES[:, 0], _EDGES[:, 1]
    di, dj = dc[:, i], dc[:, j]                                    # (K,6)
    cross = (di * dj) < 0
    t = np.where(cross, di / np.where(cross, di - dj, 1.0), 0.0)
    pts = pc[:, i] + (pc[:, j] - pc[:, i]) * t[:, :, None]         # (K,6,3)
    other = [a for a in range(3) if a != axis]
    uv = pts[:, :, other]                                          # (K,6,2)
    n = cross.sum(axis=1)
    centre = (uv * cross[:, :, None]).sum(axis=1) / n[:, None]
    ang = np.arctan2(uv[:, :, 1] - centre[:, None, 1], uv[:, :, 0] - centre[:, None, 0])
    ang = np.where(cross, ang, np.inf)
    order = np.argsort(ang, axis=1)
    uv = np.take_along_axis(uv, order[:, :, None], axis=1)
    polys = [uv[k, :n[k]] for k in range(len(cut))]
    return cut, polys


def _box_edges(lo, hi):
    c = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                  for z in (lo[2], hi[2])])
    e = [(a, b) for a in range(8) for b in range(a + 1, 8)
         if np.sum(c[a] != c[b]) == 1]
    return [c[[a, b]] for a, b in e]


def _component_colours(labels):
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    n = int(labels.max()) + 1 if len(labels) else 1
    if n == 1:
        return np.tile(np.array([[0.62, 0.78, 0.92, 1.0]]), (len(labels), 1)), n
    return cmap(labels % 10), n


# --- panels ----------------------------------------------------------------------
def _panel_3d(fig, spec, mesh, overlay):
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
    from .surface import box_wall_mask, boundary_surface
    ax = fig.add_subplot(spec, projection="3d")
    unit = unit_of(mesh)
    v, tri = boundary_surface(mesh)
    wall = box_wall_mask(mesh, v, tri)
    holes = tri[~wall]
    vk = unit.scale(v)
    if len(holes):
        p = vk[holes]
        n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
        light = np.array([-0.4, -0.5, 0.77])
        light /= np.linalg.norm(light)
        # normals point into the holes: the asteroid's own outside is -n
        shade = 0.3 + 0.7 * np.clip(-n @ light, 0, 1)
        base = np.array([0.72, 0.55, 0.40])
        fc = np.concatenate([shade[:, None] * base, np.ones((len(p), 1))], axis=1)
        ax.add_collection3d(Poly3DCollection(p, facecolors=fc, edgecolors=fc * [0.8, 0.8, 0.8, 1],
                                             linewidths=0.15))
    lo, hi = unit.scale(mesh.bbox_min), unit.scale(mesh.bbox_max)
    ax.add_collection3d(Line3DCollection(_box_edges(lo, hi), colors="0.35", linewidths=0.8))
    _overlay_3d(ax, mesh, overlay)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(np.maximum(hi - lo, 1e-9))
    ax.set_xlabel(f"x ({unit.name})")
    ax.set_ylabel(f"y ({unit.name})")
    ax.set_zlabel(f"z ({unit.name})")
    ax.tick_params(labelsize=7)
    # (the file does not say what its obstacles are: rocks, a level's walls...)
    ax.set_title(f"boundary: {len(holes)} obstacle triangles, box {int(wall.sum())} "
                 "(wireframe)", fontsize=9)
    return ax


#: (overlay key, colour, matplotlib marker) of a path's two ends.
_ENDS = (("start", START_COLOUR, "o"), ("goal", GOAL_COLOUR, "D"))


def _overlay_3d(ax, mesh, overlay):
    per_unit = unit_of(mesh).metres     # metres per unit of the axes
    pts, corridor, _ = overlay.get("route", (None, None, ""))
    if corridor is not None and len(corridor):
        c = mesh.tet_centres[corridor[(corridor >= 0) & (corridor < mesh.n_tets)]] / per_unit
        ax.scatter(c[:, 0], c[:, 1], c[:, 2], color="tab:blue", s=2, alpha=0.5,
                   depthshade=False, label="corridor (tetrahedron centres)")
    if pts is not None:
        q = pts / per_unit
        ax.plot(q[:, 0], q[:, 1], q[:, 2], color=PATH_COLOUR, lw=2, marker="o", ms=3,
                label="path")
    for key, colour, marker in _ENDS:
        if key in overlay:
            q = np.asarray(overlay[key]) / per_unit
            ax.scatter([q[0]], [q[1]], [q[2]], color=colour, marker=marker, s=40,
                       edgecolors="k", linewidths=0.6, depthshade=False, label=key)
    if overlay.get("points") is not None and len(overlay["points"]):
        q = overlay["points"] / per_unit
        ax.scatter(q[:, 0], q[:, 1], q[:, 2], color="k", marker="x", s=12, depthshade=False,
                   label="points")


def _panel_grid(fig, spec, mesh, overlay, reduce="sum"):
    ax = fig.add_subplot(spec)
    unit = unit_of(mesh)
    nx, ny, nz = mesh.dims
    refs = np.asarray(mesh.cell_ref_count).reshape(nz, ny, nx)
    img = refs.max(axis=0) if reduce == "max" else refs.sum(axis=0)
    lo, hi = unit.scale(mesh.bbox_min), unit.scale(mesh.bbox_max)
    im = ax.imshow(img, origin="lower", extent=(lo[0], hi[0], lo[1], hi[1]),
                   cmap="viridis", interpolation="nearest", aspect="equal")
    cb = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cb.set_label(f"tetrahedra listed per cell ({reduce} over z)", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    occupied = int(np.count_nonzero(mesh.cell_ref_count))
    ax.set_title(f"grid {nx}x{ny}x{nz}: {occupied} of {mesh.n_cells} cells occupied, "
                 f"{mesh.n_refs} refs", fontsize=9)
    _overlay_2d(ax, mesh, overlay, (0, 1), None)
    ax.set_xlabel(f"x ({unit.name})")
    ax.set_ylabel(f"y ({unit.name})")
    ax.tick_params(labelsize=7)
    return ax


def check_slice(mesh, axis, value):
    """ExportError unless the plane coordinate[axis] == value lies strictly
    inside the box (a plane outside it, or on a wall, cuts nothing)."""
    lo, hi = float(mesh.bbox_min[axis]), float(mesh.bbox_max[axis])
    u = unit_of(mesh)
    if not lo < value < hi:
        raise ExportError(f"slice {_AXES[axis]} = {u.length(value, 'g')} does not cut the box "
                          f"({_AXES[axis]} runs from {u.scale(lo):g} to {u.length(hi, 'g')}; the "
                          "plane must lie strictly between): nothing to draw")


def _panel_slice(fig, spec, mesh, overlay, axis, value, labels, required=False):
    """``required``: the user asked for this plane, so one that cuts no
    tetrahedron is an error rather than an empty panel."""
    from matplotlib.collections import PolyCollection
    cut, polys = cross_section(mesh.tet_points, axis, value)
    unit = unit_of(mesh)
    per_unit = unit.metres              # metres per unit of the axes
    if required and len(cut) == 0:
        raise ExportError(f"slice {_AXES[axis]} = {unit.length(value, 'g')} cuts no tetrahedron "
                          "(the plane runs through holes only): nothing to draw")
    ax = fig.add_subplot(spec)
    other = [a for a in range(3) if a != axis]
    lo, hi = mesh.bbox_min[other] / per_unit, mesh.bbox_max[other] / per_unit
    ax.add_patch(_rect(lo, hi))
    colours, ncomp = _component_colours(labels)
    if len(cut):
        pc = PolyCollection([q / per_unit for q in polys], facecolors=colours[cut],
                            edgecolors=(0.15, 0.25, 0.4, 0.45), linewidths=0.3)
        ax.add_collection(pc)
    corridor = overlay.get("route", (None, None, ""))[1]
    if corridor is not None and len(corridor) and len(cut):
        on = np.isin(cut, corridor)
        if on.any():
            ax.add_collection(PolyCollection([polys[k] / per_unit for k in np.flatnonzero(on)],
                                             facecolors=(1.0, 0.85, 0.2, 0.8),
                                             edgecolors="darkorange", linewidths=0.6,
                                             label="corridor tets in plane"))
    _overlay_2d(ax, mesh, overlay, other, (axis, value))
    pad = 0.02 * (hi - lo)
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_aspect("equal")
    ax.set_xlabel(f"{_AXES[other[0]]} ({unit.name})")
    ax.set_ylabel(f"{_AXES[other[1]]} ({unit.name})")
    ax.tick_params(labelsize=7)
    cut_comp = len(np.unique(labels[cut])) if len(cut) else 0
    ax.set_title(f"slice {_AXES[axis]} = {unit.length(value, 'g')}: {len(cut)} tetrahedra cut, "
                 f"{cut_comp} of {ncomp} components (white: solid)", fontsize=9)
    return ax


def _rect(lo, hi):
    from matplotlib.patches import Rectangle
    return Rectangle((lo[0], lo[1]), hi[0] - lo[0], hi[1] - lo[1], fill=False,
                     edgecolor="0.3", lw=0.8)


def _overlay_2d(ax, mesh, overlay, other, plane):
    per_unit = unit_of(mesh).metres     # metres per unit of the axes
    pts, _, _ = overlay.get("route", (None, None, ""))
    u, w = other
    if pts is not None:
        q = pts / per_unit
        ax.plot(q[:, u], q[:, w], color=PATH_COLOUR, lw=1.8, marker="o", ms=2.5,
                ls="--" if plane else "-", label="path" + (" (projected)" if plane else ""))
    for key, colour, marker in _ENDS:
        if key in overlay:
            q = np.asarray(overlay[key]) / per_unit
            ax.plot([q[u]], [q[w]], marker=marker, color=colour, ms=7, mec="k", mew=0.6,
                    ls="", label=key)
    p = overlay.get("points")
    if p is not None and len(p):
        if plane is not None:
            axis, value = plane
            near = np.abs(p[:, axis] - value) <= 0.5 * mesh.cell_size[axis]
            p = p[near]
        if len(p):
            q = p / per_unit
            ax.plot(q[:, u], q[:, w], ls="", marker="x", color="k", ms=4, mew=0.8,
                    label="points" + (" within half a cell of the plane" if plane else ""))


# --- the figure ------------------------------------------------------------------
def figure(mesh, *, view="all", slice=None, path=None, points=None, size=(1200, 900),
           dpi=100, title=None, grid_reduce="sum"):
    """A matplotlib Figure (Agg canvas attached) of the requested view."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    if view not in VIEWS:
        raise ExportError(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
    w, h = (int(s) for s in size)
    if w < 100 or h < 100 or w > 10000 or h > 10000:
        raise ExportError(f"picture size {w}x{h}: each side must be 100..10000 pixels")
    from .meshio_io import components
    labels = components(mesh)
    if slice is not None:
        axis, value = parse_slice(slice)
        check_slice(mesh, axis, value)
    else:
        axis, value = 2, float((mesh.bbox_min[2] + mesh.bbox_max[2]) / 2)
    required = slice is not None and view in ("slice", "all")
    overlay = {}
    note = ""
    if path is not None:
        if _field(path, ("points",)) is not None:       # an already computed path
            overlay["route"] = route_parts(path, unit_of(mesh))
            q = overlay["route"][0]
            if q is not None:
                overlay["start"], overlay["goal"] = q[0], q[-1]
        else:
            a, b = (np.asarray(x, float).reshape(3) for x in path)
            overlay["start"], overlay["goal"] = a, b
            overlay["route"] = route(mesh, a, b)
        note = "; " + overlay["route"][2]
    if points is not None:
        overlay["points"] = np.asarray(points, float).reshape(-1, 3)
    fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    if view == "all":
        gs = fig.add_gridspec(2, 2, left=0.06, right=0.96, bottom=0.09, top=0.9,
                              wspace=0.25, hspace=0.3)
        _panel_3d(fig, gs[0, 0], mesh, overlay)
        _panel_grid(fig, gs[0, 1], mesh, overlay, grid_reduce)
        _panel_slice(fig, gs[1, 0], mesh, overlay, axis, value, labels, required)
        side = 1 if axis != 1 else 2
        mid = float((mesh.bbox_min[side] + mesh.bbox_max[side]) / 2)
        _panel_slice(fig, gs[1, 1], mesh, overlay, side, mid, labels)
    else:
        gs = fig.add_gridspec(1, 1, left=0.08, right=0.86 if view == "grid" else 0.95,
                              bottom=0.12, top=0.88)
        if view == "3d":
            _panel_3d(fig, gs[0, 0], mesh, overlay)
        elif view == "grid":
            _panel_grid(fig, gs[0, 0], mesh, overlay, grid_reduce)
        else:
            _panel_slice(fig, gs[0, 0], mesh, overlay, axis, value, labels, required)
    if title is None:
        name = os.path.basename(str(mesh.path)) if mesh.path else "(built in memory)"
        ncomp = int(labels.max()) + 1 if len(labels) else 0
        title = (f"{name}: {mesh.n_vertices} vertices, {mesh.n_tets} tetrahedra, "
                 f"{mesh.n_faces} faces, {ncomp} component{'s' if ncomp != 1 else ''}"
                 f"{note}")
    fig.suptitle(title, fontsize=11, parse_math=False)   # '$' in a file name is text
    _figure_legend(fig)
    return fig


def _figure_legend(fig):
    """One legend for all panels, below them (never over the drawing)."""
    seen = {}
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if not label.startswith("_"):
                seen.setdefault(label, h)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=min(len(seen), 4),
                   fontsize=8, frameon=False, markerscale=1.5)


def png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    return buf.getvalue()


def render(mesh, out, **kwargs) -> None:
    """Draw ``mesh`` to the PNG file ``out`` (atomically); keyword arguments as
    :func:`figure` (view, slice, path, points, size, dpi, title, grid_reduce)."""
    if not os.fspath(out).lower().endswith(".png"):
        raise ExportError(f"{os.fspath(out)}: pictures are written as .png")
    write_bytes(out, png_bytes(figure(mesh, **kwargs)))
