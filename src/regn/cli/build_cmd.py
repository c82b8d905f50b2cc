"""``regn build``: a REGN from obstacles, a random asteroid field, or a tet mesh.

  regn build --box X0 Y0 Z0 X1 Y1 Z1 [--spheres F.csv|F.json] [--obstacles A.obj ...]
             [--agent-radius R] [--dims NX NY NZ] [--detail D] [--seed S] -o OUT.rgn
  regn build --asteroids N --seed S --half-extent H -o OUT.rgn
  regn build --from-mesh MESH.msh|.vtu|.vtk|.xdmf|.mesh -o OUT.rgn

Prints a build report (counts, free-volume coverage, clearance check, seconds
per stage; --json for JSON). An existing OUT is refused without --force.
"""

from __future__ import annotations

import os
import sys
import time


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0],
                       epilog=__doc__.split("\n\n", 1)[1],
                       formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    src = p.add_argument_group("what to build (one of)")
    src.add_argument("--box", nargs=6, type=float, metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                     help="the play volume's box (metres)")
    src.add_argument("--asteroids", type=int, metavar="N",
                     help="a random asteroid field of N spheres (see --seed, --half-extent)")
    src.add_argument("--from-mesh", metavar="MESH",
                     help="an existing tetrahedral mesh (anything meshio reads, or regn's "
                          ".xdmf; tetra cells)")
    p.add_argument("--spheres", action="append", default=[], metavar="FILE",
                   help="sphere obstacles: CSV x,y,z,radius (optional header) or JSON list")
    p.add_argument("--obstacles", nargs="+", default=[], metavar="MESH",
                   help="closed triangle-surface obstacles (.obj .ply .stl .off)")
    p.add_argument("--half-extent", type=float, default=50_000.0, metavar="H",
                   help="--asteroids: the cube +-H (default 50000)")
    p.add_argument("--agent-radius", type=float, default=0.0, metavar="R",
                   help="inflate every obstacle by R (default 0)")
    p.add_argument("--dims", nargs=3, type=int, metavar=("NX", "NY", "NZ"),
                   help="grid cells per axis (default about 10 km cells, at most 10)")
    p.add_argument("--detail", type=float, default=1.0, metavar="D",
                   help="sampling density multiplier (default 1)")
    p.add_argument("--seed", type=int, default=0, help="jitter / asteroid seed (default 0)")
    p.add_argument("--coverage-samples", type=int, default=200_000, metavar="N",
                   help="Monte Carlo samples for the coverage figure (0 skips it; "
                   "default 200000)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.rgn", help="file to write")
    p.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


class _Progress:
    """A one-line bar on stderr, only on a TTY and only once a build passes 1 s."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.shown = False
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, stage, frac):
        if not self.tty or time.perf_counter() - self.t0 < 1.0:
            return
        n = int(round(30 * frac))
        self.stream.write(f"\r[{'#' * n}{' ' * (30 - n)}] {stage:<16}")
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\r" + " " * 50 + "\r")
            self.stream.flush()


def _text_report(out, rep):
    s = rep.get("seconds", {})
    lines = [f"wrote {out}"]
    lines.append(f"  {rep['vertices']} vertices, {rep['tets']} tetrahedra, {rep['faces']} faces, "
                 f"{rep['cells']} cells {tuple(rep['dims'])}, {rep['refs']} cell refs")
    if "obstacles" in rep:
        lines.append(f"  {rep['obstacles']} obstacles, agent radius {rep['agent_radius']:g}, "
                     f"detail {rep['detail']:g}; {rep['sample_points']} sample points, "
                     f"{rep['delaunay_tets']} Delaunay tets ({rep['dropped_obstacle']} meet an "
                     f"obstacle, {rep['dropped_degenerate']} degenerate, "
                     f"{rep.get('dropped_slivers', 0)} surface slivers, "
                     f"{rep.get('dropped_specks', 0)} in specks dropped)")
    if rep.get("coverage") is not None:
        lines.append(f"  free-volume coverage {100 * rep['coverage']:.2f} % "
                     f"({rep['coverage_samples']} Monte Carlo samples)")
    if "clearance_violations" in rep:
        lines.append("  clearance check: " + ("pass (no tetrahedron meets an inflated obstacle)"
                                              if rep["clearance_ok"] else
                                              f"FAIL ({rep['clearance_violations']} tetrahedra)"))
    if "components" in rep:
        lines.append(f"  {rep['components']} connected component(s)")
    if s:
        lines.append("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
    return "\n".join(lines)


def run(args) -> int:
    from ..errors import RegnError
    from ..io import save
    modes = [m for m in ("box", "asteroids", "from_mesh") if getattr(args, m) is not None]
    if args.asteroids is not None and args.box is not None:
        modes.remove("box")                     # --asteroids in a custom box
    if len(modes) != 1:
        raise RegnError("build: give exactly one of --box, --asteroids N, --from-mesh MESH")
    if os.path.exists(args.output) and not args.force:
        raise RegnError(f"{args.output}: exists (pass --force to overwrite)")
    dims = tuple(args.dims) if args.dims else None
    t0 = time.perf_counter()
    if modes[0] == "from_mesh":
        from ..builder.from_meshio import from_mesh_file
        bbox = (args.box[:3], args.box[3:]) if args.box else None
        mesh = from_mesh_file(args.from_mesh, bbox=bbox, dims=dims)
        rep = {"vertices": mesh.n_vertices, "tets": mesh.n_tets, "faces": mesh.n_faces,
               "cells": mesh.n_cells, "refs": mesh.n_refs, "dims": list(mesh.dims),
               "source": args.from_mesh,
               "seconds": {"total": time.perf_counter() - t0}}
    else:
        from ..builder.generate import generate
        from ..builder.obstacles import random_asteroid_field
        from ..inputs.obstacles import load_obstacle_mesh, load_spheres
        obstacles = []
        if modes[0] == "asteroids":
            h = float(args.half_extent)
            if not h > 0:
                raise RegnError("--half-extent must be > 0")
            bbox = (args.box[:3], args.box[3:]) if args.box else ((-h,) * 3, (h,) * 3)
            obstacles += random_asteroid_field(args.asteroids, seed=args.seed, half_extent=h)
        else:
            bbox = (args.box[:3], args.box[3:])
        for f in args.spheres:
            obstacles += load_spheres(f)
        for f in args.obstacles:
            obstacles.append(load_obstacle_mesh(f))
        bar = _Progress()
        try:
            mesh = generate(bbox, obstacles, agent_radius=args.agent_radius, dims=dims,
                            detail=args.detail, seed=args.seed, progress=bar,
                            coverage_samples=max(0, args.coverage_samples))
        finally:
            bar.close()
        rep = dict(mesh.build_report)
    t1 = time.perf_counter()
    save(mesh, args.output, overwrite=args.force)
    rep.setdefault("seconds", {})["write"] = time.perf_counter() - t1
    rep["output"] = args.output
    if args.json:
        from ._common import print_json
        print_json(rep)
    else:
        print(_text_report(args.output, rep))
    return 0
