"""An interactive 3D view as one self-contained HTML file (plotly, the
library's JavaScript inlined — opening it needs no network).

Traces: the asteroid surfaces (``Mesh3d`` of the boundary surface without
the box walls), the box as a wireframe, the occupied grid cells (a marker at
each cell centre coloured by how many tetrahedra it lists — hidden at first;
the buttons or a click on its legend entry toggle it), and optionally a path.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ExportError
from . import write_bytes

KM = 1000.0


def figure(mesh, *, path=None, points=None, title=None):
    """The plotly Figure (coordinates in km)."""
    import plotly.graph_objects as go
    from .render import _box_edges, route
    from .surface import box_wall_mask, boundary_surface
    v, tri = boundary_surface(mesh)
    holes = tri[~box_wall_mask(mesh, v, tri)]
    vk = v / KM
    traces = []
    if len(holes):
        traces.append(go.Mesh3d(
            x=vk[:, 0], y=vk[:, 1], z=vk[:, 2], i=holes[:, 0], j=holes[:, 2], k=holes[:, 1],   # wound as the asteroid's outside
            color="#b88c66", flatshading=True, name=f"asteroids ({len(holes)} triangles)",
            showlegend=True, hoverinfo="name",
            lighting=dict(ambient=0.35, diffuse=0.8, specular=0.1, roughness=0.9),
            lightposition=dict(x=-4e4, y=-5e4, z=8e4)))
    ex, ey, ez = [], [], []
    for seg in _box_edges(mesh.bbox_min / KM, mesh.bbox_max / KM):
        ex += [seg[0, 0], seg[1, 0], None]
        ey += [seg[0, 1], seg[1, 1], None]
        ez += [seg[0, 2], seg[1, 2], None]
    traces.append(go.Scatter3d(x=ex, y=ey, z=ez, mode="lines", name="box",
                               line=dict(color="#555", width=2), hoverinfo="skip"))
    # grid: occupied cells, toggled
    from ..geometry import cell_bounds
    refs = np.asarray(mesh.cell_ref_count)
    occ = np.flatnonzero(refs)
    lo, hi = cell_bounds(occ, mesh.bbox_min, mesh.cell_size, mesh.dims)
    c = (lo + hi) / 2 / KM
    traces.append(go.Scatter3d(
        x=c[:, 0], y=c[:, 1], z=c[:, 2], mode="markers", visible="legendonly",
        name=f"grid: {len(occ)} occupied cells", text=[f"cell {i}: {r} tets"
                                                       for i, r in zip(occ, refs[occ])],
        hoverinfo="text",
        marker=dict(size=4, color=refs[occ], colorscale="Viridis", opacity=0.55,
                    colorbar=dict(title="tets / cell", len=0.6))))
    grid_index = len(traces) - 1
    note = ""
    if path is not None:
        from .render import _field, route_parts
        if _field(path, ("points",)) is not None:       # an already computed path
            pts, _, note = route_parts(path)
            ends = None if pts is None else np.stack([pts[0], pts[-1]])
        else:
            a, b = (np.asarray(x, float).reshape(3) for x in path)
            pts, _, note = route(mesh, a, b)
            ends = np.stack([a, b])
        note = "; " + note
        if pts is not None:
            q = pts / KM
            traces.append(go.Scatter3d(x=q[:, 0], y=q[:, 1], z=q[:, 2], mode="lines+markers",
                                       name="path", line=dict(color="crimson", width=6),
                                       marker=dict(size=3, color="crimson")))
        if ends is not None:
            e = ends / KM
            traces.append(go.Scatter3d(x=e[:, 0], y=e[:, 1], z=e[:, 2], mode="markers",
                                       name="start / goal",
                                       marker=dict(size=6, color=["green", "red"])))
    if points is not None:
        q = np.asarray(points, float).reshape(-1, 3) / KM
        traces.append(go.Scatter3d(x=q[:, 0], y=q[:, 1], z=q[:, 2], mode="markers",
                                   name=f"{len(q)} points", marker=dict(size=2, color="black")))
    fig = go.Figure(traces)
    n = len(traces)
    vis_on = [True] * n
    vis_off = [True] * n
    vis_off[grid_index] = "legendonly"
    if title is None:
        name = os.path.basename(str(mesh.path)) if mesh.path else "(built in memory)"
        title = (f"{name}: {mesh.n_vertices} vertices, {mesh.n_tets} tetrahedra, "
                 f"{mesh.n_faces} faces, grid {'x'.join(map(str, mesh.dims))}{note}")
    ext = np.maximum(mesh.bbox_max - mesh.bbox_min, 1e-9)
    fig.update_layout(
        title=dict(text=title, font=dict(size=14)),
        scene=dict(xaxis_title="x (km)", yaxis_title="y (km)", zaxis_title="z (km)",
                   aspectmode="manual",
                   aspectratio=dict(zip("xyz", (ext / ext.max()).tolist()))),
        legend=dict(x=0.01, y=0.98),
        margin=dict(l=0, r=0, t=50, b=0),
        updatemenus=[dict(type="buttons", direction="right", x=0.99, xanchor="right",
                          y=0.02, yanchor="bottom", showactive=True, buttons=[
                              dict(label="surface", method="restyle",
                                   args=[{"visible": vis_off}]),
                              dict(label="surface + grid", method="restyle",
                                   args=[{"visible": vis_on}])])])
    return fig


def html_bytes(mesh, **kwargs) -> bytes:
    fig = figure(mesh, **kwargs)
    html = fig.to_html(include_plotlyjs=True, full_html=True,
                       config={"displaylogo": False, "responsive": True},
                       default_height="96vh", default_width="100%")
    # fill the window (plotly's full page leaves the div at its default size)
    html = html.replace("<head>", "<head><style>html, body {height: 100%; margin: 0}</style>", 1)
    return html.encode("utf-8")


def write_html(mesh, out, **kwargs) -> None:
    """Write the interactive view to ``out`` (.html), atomically."""
    if not os.fspath(out).lower().endswith((".html", ".htm")):
        raise ExportError(f"{os.fspath(out)}: the interactive view is written as .html")
    write_bytes(out, html_bytes(mesh, **kwargs))
