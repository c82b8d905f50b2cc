"""``regn view FILE -o OUT.html``: an interactive 3D view in one HTML file."""

from __future__ import annotations

from ._common import add_json_option, check_output, coordinate, load_mesh
from .render_cmd import add_radius_option, path_arg, points_arg, written

DESCRIPTION = """Write a self-contained HTML page (plotly, JavaScript inlined: no network
needed) showing the asteroid surfaces, the box, the occupied grid cells and
optionally a path with its corridor; a click on a legend entry shows or hides
that layer (the grid and the corridor start hidden). With --path the camera
frames the path: it looks across it from where asteroids hide the least."""


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION)
    p.add_argument("file", help="REGN file to read")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html")
    p.add_argument("--path", nargs=6, type=coordinate, metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                   help="show the shortest path between these two points")
    add_radius_option(p)
    p.add_argument("--points", metavar="FILE",
                   help="show points (x y z lines, .csv or .npy; '-' for stdin)")
    p.add_argument("--trajectories", metavar="TRAJ.npz",
                   help="play back a 'regn fly' trajectory (time slider, play/pause)")
    p.add_argument("--title", help="replace the title")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing OUT (never the input)")
    add_json_option(p, "what was written")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import ExportError
    from ..export.view import write_html
    out = args.output
    if not out.lower().endswith((".html", ".htm")):
        raise ExportError(f"{out}: the interactive view is written as .html")
    check_output(out, [args.file, args.points, args.trajectories], args.force)
    mesh = load_mesh(args.file)
    route, said = path_arg(mesh, args)
    if getattr(mesh, "is_world", False):        # a manifest: the tiles and the path
        if args.trajectories:
            raise ExportError(f"view: {args.file} is a world: --trajectories plays back "
                              "over one REGN")
        from ..world.drawing import view_world
        view_world(mesh, out, path=route, points=points_arg(args.points), title=args.title)
        written(args, out, f"wrote {out}: {{size}} bytes", (route, said))
        return 0
    traj = None
    if args.trajectories:
        from ..export.playback import load_trajectories
        traj = load_trajectories(args.trajectories)
    write_html(mesh, out, path=route, points=points_arg(args.points), title=args.title,
               trajectories=traj)
    written(args, out, f"wrote {out}: {{size}} bytes", (route, said))
    return 0
