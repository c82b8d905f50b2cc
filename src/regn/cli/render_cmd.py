"""``regn render FILE -o OUT.png``: a picture of the mesh."""

from __future__ import annotations

import os
import re

from ..inputs.numbers import number, whole
from ._common import (add_json_option, check_output, coordinate, load_mesh, read_points,
                      report_written)

DESCRIPTION = """Draw the mesh to a PNG (axes in metres for a map under 10 km, in km for a
larger one). Views: 3d (asteroid surfaces shaded, box as wireframe), grid (top view of tetrahedra listed per cell, summed
over z), slice (cross-section at --slice, cut tetrahedra coloured by connected
component), all (the three plus a perpendicular slice; the default). A --slice
plane must cut the box: one outside it (or on a wall) is refused."""


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION)
    p.add_argument("file", help="REGN file to read")
    p.add_argument("-o", "--output", required=True, metavar="OUT.png")
    p.add_argument("--view", choices=("3d", "grid", "slice", "all"), default="all")
    p.add_argument("--slice", metavar="AXIS=VALUE",
                   help="cross-section plane, e.g. z=0 or y=-12.5km (metres unless km; "
                        "default z through the box centre)")
    p.add_argument("--path", nargs=6, type=coordinate, metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                   help="overlay the shortest path between these two points")
    add_radius_option(p)
    p.add_argument("--points", metavar="FILE",
                   help="overlay points (x y z lines, .csv or .npy; '-' for stdin)")
    p.add_argument("--size", default="1200x900", metavar="WxH",
                   help="picture size in pixels (default 1200x900)")
    p.add_argument("--dpi", type=whole, default=100,
                   help=f"dots per inch, {DPI_RANGE[0]}..{DPI_RANGE[1]} (default 100)")
    p.add_argument("--grid-reduce", choices=("sum", "max"), default="sum",
                   help="how the grid view combines the z layers (default sum)")
    p.add_argument("--title", help="replace the title")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing OUT (never the input)")
    add_json_option(p, "what was written")
    p.set_defaults(func=run)


#: dots per inch a picture may be drawn at (the size in pixels is --size).
DPI_RANGE = (10, 1000)


def parse_size(text):
    from ..errors import ExportError
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not m:
        raise ExportError(f"--size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. 1200x900")
    return int(m.group(1)), int(m.group(2))


def add_radius_option(p):
    """``--radius R``, for ``--path`` (as ``regn path --radius``)."""
    p.add_argument("--radius", type=number, default=0.0, metavar="R",
                   help="with --path: the path of a sphere of R metres (it never comes "
                        "closer than R to a wall), as 'regn path --radius'")


def path_arg(mesh, args):
    """(the path result of ``--path``, for a sphere of ``--radius``, and the
    words saying what it is: "path 143.2 km, 12 points", "path 87.3 m, 4
    points" (:mod:`regn.units`) or "no path (start_outside)"); (None, None)
    without ``--path``."""
    values, radius = args.path, args.radius
    if values is None:
        if radius:
            from ..errors import QueryError
            raise QueryError(f"--radius {radius:g}: the radius of --path's sphere; give "
                             "--path too")
        return None, None
    from ..export.render import route_parts
    from ..units import unit_of
    route = _find_path(mesh, values, radius, args)
    said = route_parts(route, unit_of(mesh))[2]
    # (the radius as given: in metres, as --radius takes it)
    return route, said + (f" for a sphere of radius {radius:g} m"
                          if radius > 0 and route.found else "")


def _find_path(mesh, values, radius, args):
    """``mesh.find_path`` between the six ``values``; a world's sphere path
    (seconds: its tiles' clearances) shows progress at a terminal."""
    if radius <= 0 or not getattr(mesh, "is_world", False):
        return mesh.find_path(values[:3], values[3:], radius=radius)
    from ._progress import Progress
    mesh.progress = Progress.for_args(args)
    try:
        return mesh.find_path(values[:3], values[3:], radius=radius)
    finally:
        mesh.progress.close()
        mesh.progress = None


def route_summary(route):
    """The ``--path`` a picture shows, for a --json summary: status, length
    and number of points (None without --path)."""
    if route is None:
        return None
    found = bool(route.found)
    return {"status": str(route.status), "found": found,
            "length": float(route.length) if found else None,
            "n_points": int(len(route.points))}


def written(args, out, text, route=None, **figures):
    """Say what was written: ``text`` + the path's words, or with --json the
    document of ``out``, its size, ``figures`` and the path's summary."""
    size = os.path.getsize(out)
    doc = {"output": out, "bytes": size, **figures}
    if args.path is not None:
        doc["path"] = route_summary(route[0])
    said = route[1] if route else None
    # (replace, not format: a file name may hold braces)
    report_written(args, doc, text.replace("{size}", str(size)) + (f"; {said}" if said else ""))


def points_arg(source):
    if source is None:
        return None
    return read_points(None if source == "-" else source)


def run(args) -> int:
    from ..errors import ExportError
    from ..export.render import parse_slice, render
    out = args.output
    if not out.lower().endswith(".png"):
        raise ExportError(f"{out}: pictures are written as .png")
    size = parse_size(args.size)
    if not DPI_RANGE[0] <= args.dpi <= DPI_RANGE[1]:
        raise ExportError(f"--dpi {args.dpi}: must be {DPI_RANGE[0]}..{DPI_RANGE[1]}")
    if args.slice is not None:
        parse_slice(args.slice)                 # fail before reading the mesh
    check_output(out, [args.file, args.points], args.force)
    mesh = load_mesh(args.file)
    if getattr(mesh, "is_world", False):
        return _render_world(args, mesh, out, size)
    route, said = path_arg(mesh, args)
    render(mesh, out, view=args.view, slice=args.slice, path=route,
           points=points_arg(args.points), size=size, dpi=args.dpi, title=args.title,
           grid_reduce=args.grid_reduce)
    written(args, out, f"wrote {out}: {size[0]}x{size[1]} px, view {args.view}, "
            "{size} bytes", (route, said), width=size[0], height=size[1], view=args.view)
    return 0


def _render_world(args, world, out, size) -> int:
    """A manifest: the tiles in 3D and from above, a path across them."""
    from ..errors import ExportError
    from ..world.drawing import render_world
    if args.view != "all" or args.slice is not None:
        raise ExportError(f"render: {args.file} is a world: it is drawn as its tiles (3D "
                          "and from above); --view and --slice are a REGN's")
    route, said = path_arg(world, args)
    render_world(world, out, path=route, points=points_arg(args.points), size=size,
                 dpi=args.dpi, title=args.title)
    written(args, out, f"wrote {out}: {size[0]}x{size[1]} px, {world.n_tiles} tiles, "
            "{size} bytes", (route, said), width=size[0], height=size[1],
            tiles=world.n_tiles)
    return 0
