"""An interactive 3D view as one self-contained HTML file (plotly, the
library's JavaScript inlined — opening it needs no network).

Layers, each one legend entry (a click shows or hides it): the obstacles (the
boundary surface without the box walls), the box (wireframe), the occupied
grid cells (a marker at each cell centre coloured by how many tetrahedra it
lists; hidden at first) and, with a path, the corridor (the edges of the
tetrahedra the path crosses; hidden at first), the path, its start and its
goal. The legend sits left of the scene, never over it.

With a path the camera frames it: it looks across the path (never along it),
from the side where the fewest obstacles hide it, and close enough that the
path fills most of the picture. When the obstacles still hide half of it (a
level's interior, walled on every side), they are drawn see-through; so
too when they hide half of a played-back flight's positions.
"""

from __future__ import annotations

import html
import os

import numpy as np

from ..errors import ExportError
from ._files import write_bytes
from ..units import unit_of
from .render import GOAL_COLOUR, PATH_COLOUR, START_COLOUR

#: The scene's horizontal share of the page; the legend lives left of it.
SCENE_DOMAIN_X = (0.2, 1.0)
#: Half the vertical field of view of plotly's 3D camera (perspective, 45°).
_HALF_FOV_TAN = np.tan(np.pi / 8)
#: The share of the picture's half-height the framed path may fill.
_FILL = 0.8
#: When the walls hide at least this share of the path from the best camera
#: (a level's interior: every side is a wall), they are drawn see-through,
#: at this opacity.
SEE_THROUGH_HIDDEN = 0.5
SEE_THROUGH_OPACITY = 0.25


def figure(mesh, *, path=None, points=None, title=None, camera="auto", trajectories=None):
    """The plotly Figure (coordinates in metres for a map under 10 km, km for
    a larger one: :mod:`regn.units`). ``camera``: 'auto' frames the
    path (:func:`frame_path`; plotly's default view without a path), None
    keeps plotly's default, a dict (``eye``, ``center``, ``up``) is used as is.
    ``trajectories``: (positions (T+1,N,3), dt) played back with a time
    slider (:mod:`regn.export.playback`)."""
    import plotly.graph_objects as go
    per_unit = unit_of(mesh).metres      # metres per unit of the scene's axes
    traces = _surface_traces(mesh, per_unit) + [_grid_trace(mesh, per_unit)]
    note, framed = "", None
    if path is not None:
        pts, corridor, ends, note = _route(mesh, path)
        note = "; " + note
        if corridor is not None and len(corridor):
            traces.append(_corridor_trace(mesh, corridor, per_unit))
        if pts is not None:
            traces += _path_traces(pts, ends, unit_of(mesh))
            if camera == "auto":
                framed, hidden = _frame(mesh, pts)
                note += _see_through(traces, hidden)
    elif trajectories is not None and camera == "auto":
        # the agents inside a level: the same test on a sample of their positions
        q = np.asarray(trajectories[0], float).reshape(-1, 3)
        q = q[np.linspace(0, len(q) - 1, min(len(q), 64)).astype(int)]
        note += _see_through(traces, _frame(mesh, q)[1])
    if points is not None:
        q = np.asarray(points, float).reshape(-1, 3) / per_unit
        traces.append(go.Scatter3d(x=q[:, 0], y=q[:, 1], z=q[:, 2], mode="markers",
                                   name=f"{len(q)} points", marker=dict(size=2, color="black")))
    if title is None:
        name = os.path.basename(str(mesh.path)) if mesh.path else "(built in memory)"
        # the path's and the walls' notes on a line of their own: one long
        # line ran under plotly's toolbar, top right
        title = (f"{name}: {mesh.n_vertices} vertices, {mesh.n_tets} tetrahedra, "
                 f"{mesh.n_faces} faces, grid {'x'.join(map(str, mesh.dims))}"
                 + (f"<br>{note.lstrip('; ')}" if note else ""))
    fig = go.Figure(traces)
    lo, hi = mesh.bbox_min / per_unit, mesh.bbox_max / per_unit
    ext = np.maximum(hi - lo, 1e-12)
    axes = {f"{a}axis": dict(title=f"{a} ({unit_of(mesh).name})", range=[float(lo[k]), float(hi[k])])
            for k, a in enumerate("xyz")}
    scene = dict(**axes, aspectmode="manual", domain=dict(x=list(SCENE_DOMAIN_X), y=[0, 1]),
                 aspectratio=dict(zip("xyz", (ext / ext.max()).tolist())))
    if isinstance(camera, dict) or framed is not None:
        scene["camera"] = camera if isinstance(camera, dict) else framed
    fig.update_layout(
        title=dict(text=title, font=dict(size=14)), scene=scene,
        legend=dict(x=0.0, y=0.95, xanchor="left", yanchor="top", itemsizing="constant",
                    title=dict(text="click: show / hide<br>double-click: only this")),
        margin=dict(l=0, r=0, t=40 + 20 * title.count("<br>"), b=0))
    if trajectories is not None:
        from .playback import add_playback
        add_playback(fig, trajectories[0], trajectories[1], per_unit)
    return fig


def _see_through(traces, hidden) -> str:
    """Draw the obstacles see-through when they hide ``hidden`` >=
    SEE_THROUGH_HIDDEN of what is shown from the best camera; the title's note."""
    walls = [t for t in traces if str(t.name).startswith("obstacles")]
    if hidden < SEE_THROUGH_HIDDEN or not walls:
        return ""
    walls[0].opacity = SEE_THROUGH_OPACITY
    return "; walls drawn see-through"


# --- layers ------------------------------------------------------------------------
def _surface_traces(mesh, per_unit):
    """The obstacles (shaded, wound as their own outside) and the box wireframe.
    They are called obstacles: a REGN does not say whether they are rocks or a
    level's walls."""
    import plotly.graph_objects as go
    from .render import _box_edges
    from .surface import box_wall_mask, boundary_surface
    v, tri = boundary_surface(mesh)
    holes = tri[~box_wall_mask(mesh, v, tri)]
    vk = v / per_unit
    traces = []
    if len(holes):
        traces.append(go.Mesh3d(
            x=vk[:, 0], y=vk[:, 1], z=vk[:, 2], i=holes[:, 0], j=holes[:, 2], k=holes[:, 1],
            color="#b88c66", flatshading=True, name=f"obstacles ({len(holes)} triangles)",
            showlegend=True, hoverinfo="name",
            lighting=dict(ambient=0.35, diffuse=0.8, specular=0.1, roughness=0.9),
            lightposition=dict(x=-4e4, y=-5e4, z=8e4)))
    x, y, z = _segments(_box_edges(mesh.bbox_min / per_unit, mesh.bbox_max / per_unit))
    traces.append(go.Scatter3d(x=x, y=y, z=z, mode="lines", name="box",
                               line=dict(color="#555", width=2), hoverinfo="skip"))
    return traces


def _segments(pairs):
    """x, y, z lists drawing each (2,3) segment, separated by gaps (None)."""
    out = ([], [], [])
    for seg in pairs:
        for k in range(3):
            out[k].extend([float(seg[0, k]), float(seg[1, k]), None])
    return out


def _grid_trace(mesh, per_unit):
    """The occupied cells as markers coloured by tetrahedra listed (hidden at first)."""
    import plotly.graph_objects as go
    from ..geometry import cell_bounds
    refs = np.asarray(mesh.cell_ref_count)
    occ = np.flatnonzero(refs)
    lo, hi = cell_bounds(occ, mesh.bbox_min, mesh.cell_size, mesh.dims)
    c = (lo + hi) / 2 / per_unit
    return go.Scatter3d(
        x=c[:, 0], y=c[:, 1], z=c[:, 2], mode="markers", visible="legendonly",
        name=f"grid: {len(occ)} occupied cells",
        text=[f"cell {i}: {r} tets" for i, r in zip(occ, refs[occ])], hoverinfo="text",
        marker=dict(size=4, color=refs[occ], colorscale="Viridis", opacity=0.55,
                    colorbar=dict(title="tets / cell", len=0.6, x=1.0, xanchor="right")))


def _route(mesh, path):
    """(points or None, corridor or None, (start, goal) or None, note) of a
    path given as its two ends or as a computed result."""
    from .render import _field, route, route_parts
    if _field(path, ("points",)) is not None:           # an already computed path
        pts, corridor, note = route_parts(path, unit_of(mesh))
        ends = None if pts is None else (pts[0], pts[-1])
    else:
        a, b = (np.asarray(x, float).reshape(3) for x in path)
        pts, corridor, note = route(mesh, a, b)
        ends = (a, b)
    return pts, corridor, ends, note


def _corridor_trace(mesh, corridor, per_unit):
    """The edges of the tetrahedra the path crosses (hidden at first)."""
    import plotly.graph_objects as go
    from ..geometry import TET_EDGES
    tets = corridor[(corridor >= 0) & (corridor < mesh.n_tets)]
    p = np.asarray(mesh.tet_points)[tets] / per_unit                # (K,4,3)
    edges = p[:, TET_EDGES].reshape(-1, 2, 3)
    x, y, z = _segments(edges)
    return go.Scatter3d(x=x, y=y, z=z, mode="lines", visible="legendonly",
                        name=f"corridor ({len(tets)} tetrahedra)", hoverinfo="skip",
                        line=dict(color="#e6a000", width=2))


def _path_traces(pts, ends, unit):
    """The path, then its start and goal as two markers with their own legend
    entries (drawn last, so they sit on top), in ``unit`` (:mod:`regn.units`)."""
    import plotly.graph_objects as go
    q = unit.scale(pts)
    traces = [go.Scatter3d(x=q[:, 0], y=q[:, 1], z=q[:, 2], mode="lines+markers",
                           name="path", line=dict(color=PATH_COLOUR, width=7),
                           marker=dict(size=2.5, color=PATH_COLOUR))]
    start, goal = (unit.scale(e) for e in (ends or (pts[0], pts[-1])))
    for label, p, colour, symbol in (("start", start, START_COLOUR, "circle"),
                                     ("goal", goal, GOAL_COLOUR, "diamond")):
        where = ", ".join(f"{c:.1f}" for c in p)
        traces.append(go.Scatter3d(
            x=[p[0]], y=[p[1]], z=[p[2]], mode="markers", name=f"{label} ({where}) {unit.name}",
            hovertext=f"{label} ({where}) {unit.name}", hoverinfo="text",
            marker=dict(size=9, color=colour, symbol=symbol,
                        line=dict(color="black", width=1.5))))
    return traces


# --- the camera ----------------------------------------------------------------------
def frame_path(mesh, pts) -> dict:
    """A plotly scene camera (``eye``, ``center``, ``up``) that frames the
    polyline ``pts`` (metres).

    Candidate view directions are spread over the sphere (not steeper than
    about 50° from the horizon, so that z stays up). Each is scored by how
    much of the path's spread it shows (a direction along the path's main
    axis shows none) and by how many path points, the two ends counted
    three times, an asteroid hides from the camera (a segment from the point
    towards the camera, walked through the mesh); a slight preference goes to
    looking down from about 25° above. The camera then backs off along the
    chosen direction until the whole path fills about 80 % of the picture.
    """
    return _frame(mesh, pts)[0]


def _frame(mesh, pts):
    """:func:`frame_path`'s camera, and the share of the path hidden from it."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    mid = (mesh.bbox_min + mesh.bbox_max) / 2
    size = float(np.max(mesh.bbox_max - mesh.bbox_min))
    n = (pts - mid) / size                        # plotly's normalised scene coordinates
    centre = (n.min(axis=0) + n.max(axis=0)) / 2
    dirs = _candidate_directions()
    spread = _spread(n - centre, dirs)
    dist = np.array([_distance(n - centre, e) for e in dirs])
    hidden = _hidden_share(mesh, pts, mid + (centre + dirs * dist[:, None]) * size)
    elevation = np.degrees(np.arcsin(np.clip(dirs[:, 2], -1, 1)))
    score = spread - 1.5 * hidden - 0.1 * np.abs(elevation - 25.0) / 90.0
    best = int(np.argmax(score))
    eye = centre + dirs[best] * dist[best]
    return dict(eye=dict(zip("xyz", eye.tolist())), center=dict(zip("xyz", centre.tolist())),
                up=dict(x=0, y=0, z=1)), float(hidden[best])


def _candidate_directions(n=160, max_elevation=50.0):
    """Unit vectors spread evenly (a Fibonacci sphere), elevation within
    ±``max_elevation`` degrees."""
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    phi = k * np.pi * (3 - np.sqrt(5))
    r = np.sqrt(1 - z * z)
    d = np.column_stack([r * np.cos(phi), r * np.sin(phi), z])
    return d[np.abs(np.degrees(np.arcsin(z))) <= max_elevation]


def _spread(q, dirs):
    """(D,) how much of the path's spread each direction shows, 0..1: the
    summed standard deviations of the path projected on the picture plane,
    over the best direction's (small when looking along a straight path)."""
    cov = np.cov(q.T) if len(q) > 1 else np.zeros((3, 3))
    proj = np.eye(3)[None] - dirs[:, :, None] * dirs[:, None, :]
    var = np.linalg.eigvalsh(proj @ cov @ proj)[:, 1:]    # the smallest, along e, is 0
    seen = np.sqrt(np.clip(var, 0, None)).sum(axis=1)
    top = seen.max()
    return seen / top if top > 0 else np.ones(len(dirs))


def _distance(q, e, fill=_FILL):
    """Distance from the view centre along ``e`` at which every point of ``q``
    (centred, normalised) projects within ``fill`` of the picture's
    half-height (and of its half-width for a square picture)."""
    up = np.array([0.0, 0.0, 1.0])
    right = np.cross(e, up)
    right /= np.linalg.norm(right)
    upv = np.cross(right, e)
    x, y, depth = q @ right, q @ upv, q @ e          # depth: towards the camera
    half = np.maximum(np.abs(x), np.abs(y))
    near = max(0.05, float(np.max(np.linalg.norm(q, axis=1))) * 0.1)
    # projected half-size at distance D: half / ((D - depth) * tan(fov / 2))
    need = half / (fill * _HALF_FOV_TAN) + depth
    return max(float(need.max()), float(depth.max()) + near, 0.15)


def _hidden_share(mesh, pts, cameras):
    """(D,) weighted share of ``pts`` that an asteroid hides from each camera
    position (the ends weigh three times a middle point)."""
    weights = np.ones(len(pts))
    weights[[0, -1]] = 3.0
    lo, hi = mesh.bbox_min, mesh.bbox_max
    inset = 1e-7 * float(np.max(hi - lo))
    a = np.repeat(pts[None], len(cameras), axis=0).reshape(-1, 3)
    b = _clip_to_box(a, np.repeat(cameras, len(pts), axis=0), lo + inset, hi - inset)
    hits = mesh.raycast_many(a, b)
    hidden = (hits.status == "hit").reshape(len(cameras), len(pts))
    return (hidden * weights).sum(axis=1) / weights.sum()


def _clip_to_box(a, b, lo, hi):
    """``b`` moved back along a → b to the box [lo, hi] when it lies outside
    (``a`` is inside): the segment then ends just inside the box wall."""
    d = b - a
    with np.errstate(divide="ignore", invalid="ignore"):
        s_hi = np.where(d > 0, (hi - a) / d, np.inf)
        s_lo = np.where(d < 0, (lo - a) / d, np.inf)
    s = np.minimum(np.minimum(s_hi, s_lo).min(axis=1), 1.0)
    return a + d * s[:, None]


# --- the page -------------------------------------------------------------------------
def html_bytes(mesh, **kwargs) -> bytes:
    fig = figure(mesh, **kwargs)
    page = fig.to_html(include_plotlyjs=True, full_html=True,
                       config={"displaylogo": False, "responsive": True},
                       default_height="100vh", default_width="100%")
    title = html.escape((fig.layout.title.text or "regn view").replace("<br>", "; "))
    # fill the window (plotly's full page leaves the div at its default size)
    head = (f"<head><title>{title}</title>"
            "<style>html, body {height: 100%; margin: 0; overflow: hidden}</style>")
    return page.replace("<head>", head, 1).encode("utf-8")


def write_html(mesh, out, **kwargs) -> None:
    """Write the interactive view to ``out`` (.html), atomically."""
    if not os.fspath(out).lower().endswith((".html", ".htm")):
        raise ExportError(f"{os.fspath(out)}: the interactive view is written as .html")
    write_bytes(out, html_bytes(mesh, **kwargs))
