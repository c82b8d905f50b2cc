"""``regn demo [DIR]``: the whole job on a built-in example map.

Build a sample asteroid field (a 100 km cube, 10x10x10 cells of 10 km), write
``DIR/demo.rgn``, verify it, locate a few points, find a path between two
far-apart free points, and draw the map with the path to ``DIR/demo.png``.
Beside them it leaves three inputs to try the other commands on:
``hangar.obj`` (a level as an editor exports it), ``caves.npy`` (a voxel
level) and ``agents.csv`` (a fleet of 40 ships crossing the demo map).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ..inputs.numbers import whole
from ._common import add_json_option, plain


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=plain(__doc__.split("\n\n")[1]))
    p.add_argument("dir", nargs="?", default="regn-demo",
                   help="where to write demo.rgn and demo.png (default ./regn-demo)")
    p.add_argument("--seed", type=whole, default=1, help="asteroid field seed")
    p.add_argument("--force", action="store_true",
                   help="replace the files the demo writes in DIR if they exist")
    add_json_option(p, "a summary (files written, checks, the paths)")
    p.set_defaults(func=run)


def far_apart_free_points(mesh, rng, radius=0.0):
    """Two navigable points near opposite corners of the box (with at least
    ``radius`` metres of room)."""
    pts = mesh.random_points(4000, seed=int(rng.integers(1 << 31)), radius=radius)
    lo, hi = mesh.bbox_min, mesh.bbox_max
    a = pts[np.argmin(np.linalg.norm(pts - lo, axis=1))]
    b = pts[np.argmin(np.linalg.norm(pts - hi, axis=1))]
    return a, b


#: the radius of the demo's second flight (metres): a ship 2 km across
DEMO_RADIUS = 1000.0


def _radius_path(mesh, rng):
    """A flight across the field for a sphere of DEMO_RADIUS, between points
    with that much room: the portals' clearances are computed first (once
    per mesh), then no point of the path comes closer than the radius to a
    wall."""
    from ..query.radius.portals import portal_clearance
    t0 = time.perf_counter()
    portal_clearance(mesh)
    t_clear = time.perf_counter() - t0
    a, b = far_apart_free_points(mesh, rng, radius=DEMO_RADIUS)
    path = mesh.find_path(a, b, radius=DEMO_RADIUS)
    print(f"path for a sphere of radius {DEMO_RADIUS / 1000:g} km "
          f"({', '.join(f'{x / 1000:.1f}' for x in a)}) -> "
          f"({', '.join(f'{x / 1000:.1f}' for x in b)}) km: {path.status}"
          + (f", length {path.length / 1000:.1f} km, {len(path.points)} waypoints, never "
             f"within {DEMO_RADIUS / 1000:g} km of a wall (portal clearances computed in "
             f"{t_clear:.2f} s)" if path.found else ""))


def _compile_ahead(quiet=False):
    """Compile the demo's kernels on every core (first run on a machine
    only: :mod:`regn.compiling`); ``wait(job)`` before each step that needs
    them shows, at a terminal, how far the compiling is."""
    from ..compiling.plan import DEMO_JOBS
    from ..compiling.pool import compile_ahead
    ahead = compile_ahead(DEMO_JOBS)
    if ahead.total and sys.stderr.isatty() and not quiet:
        def report(done, total, secs):
            sys.stderr.write(f"\rcompiling kernels on every core: {done} of {total} groups "
                             f"done ({secs:.0f} s)")
            sys.stderr.flush()
        ahead.report = report
    return ahead


def _finish_report(ahead):
    if ahead.report is not None:
        sys.stderr.write("\r" + " " * 60 + "\r")
        sys.stderr.flush()
        ahead.report = None


#: The example inputs the demo leaves beside its map.
EXAMPLES = ("hangar.obj", "caves.npy", "agents.csv")


def _write_examples(mesh, args):
    """hangar.obj, caves.npy, agents.csv (see the module's docstring)."""
    import io

    from .._atomic import atomic_write
    from ..levels.examples import cave_voxels, hangar_obj
    caves = io.BytesIO()
    np.save(caves, cave_voxels(seed=args.seed))
    starts = mesh.random_points(40, seed=args.seed, radius=600.0)
    goals = mesh.random_points(40, seed=args.seed + 1, radius=600.0)
    rows = [f"{a[0]:.1f},{a[1]:.1f},{a[2]:.1f},{b[0]:.1f},{b[1]:.1f},{b[2]:.1f},"
            f"{r:g},300,60" for a, b, r in zip(starts, goals, (200, 400) * 20)]
    agents = "x,y,z,gx,gy,gz,radius,max_speed,max_accel\n" + "\n".join(rows) + "\n"
    for name, payload in (("hangar.obj", hangar_obj().encode()),
                          ("caves.npy", caves.getvalue()), ("agents.csv", agents.encode())):
        atomic_write(os.path.join(args.dir, name), payload, overwrite=args.force)
    print(f"wrote inputs to try in {args.dir}: hangar.obj (a level: regn build --level), "
          "caves.npy (voxels: regn build --voxels), agents.csv (regn fly)")


def run(args) -> int:
    from ._common import check_output
    out, png = os.path.join(args.dir, "demo.rgn"), os.path.join(args.dir, "demo.png")
    os.makedirs(args.dir, exist_ok=True)    # the demo makes its folder
    for path in (out, png, *(os.path.join(args.dir, n) for n in EXAMPLES)):
        # refused before any work is done
        check_output(path, [], args.force)
    t0 = time.perf_counter()
    ahead = _compile_ahead(quiet=args.json)
    facts = {}
    try:
        if args.json:                       # the lines are the summary's: stdout is JSON
            import contextlib
            import io
            with contextlib.redirect_stdout(io.StringIO()):
                code = _steps(args, out, png, t0, ahead, facts)
        else:
            code = _steps(args, out, png, t0, ahead, facts)
    finally:
        _finish_report(ahead)
    ahead.close()                           # (after a failure the workers just stop)
    if args.json:
        from ._common import print_json
        print_json({"ok": code == 0, "map": out, "picture": png,
                    "examples": [os.path.join(args.dir, n) for n in EXAMPLES], **facts,
                    "seconds": round(time.perf_counter() - t0, 3)})
    return code


def _steps(args, out, png, t0, ahead, facts) -> int:
    from ..builder.generate import demo_field, generate
    from ..checks import verify
    from ..io import save
    bbox, obstacles = demo_field(seed=args.seed)
    ahead.wait("build")
    mesh = generate(bbox, obstacles, dims=(10, 10, 10), seed=args.seed)
    save(mesh, out, overwrite=args.force)
    t_build = time.perf_counter() - t0
    rep = getattr(mesh, "build_report", {}) or {}
    cov = rep.get("coverage")
    print(f"built {out}: {len(obstacles)} asteroids in a 100 km cube -> {mesh.n_vertices} "
          f"vertices, {mesh.n_tets} tetrahedra, {mesh.n_faces} faces, {mesh.n_refs} cell "
          f"refs ({t_build:.1f} s)" + (f"; covers {100 * cov:.1f} % of the free volume"
                                       if isinstance(cov, float) else ""))

    from ..io import load
    mesh = load(out)
    ahead.wait("verify")
    report = verify(mesh, strict=True)
    failed = [c.name for c in report.checks if c.status == "fail"]
    facts["counts"] = {"vertices": mesh.n_vertices, "tets": mesh.n_tets,
                       "faces": mesh.n_faces, "refs": mesh.n_refs}
    facts["verify"] = {"ok": report.ok, "failing": failed}
    print(f"verify --strict: {'pass' if report.ok else 'FAIL'} "
          f"({sum(c.status == 'pass' for c in report.checks)} of {len(report.checks)} "
          f"checks pass, {sum(c.status == 'info' for c in report.checks)} informational"
          + (f"; failing: {', '.join(failed)}" if failed else "")
          + f"; round trip {'identical' if report.roundtrip_identical else 'differs'})")

    rng = np.random.default_rng(args.seed)
    probes = np.array([[0.0, 0.0, 0.0], [49_000.0, -49_000.0, 10_000.0],
                       [-20_000.0, 30_000.0, -5_000.0], [60_000.0, 0.0, 0.0]])
    probes = np.concatenate([probes, [obstacles[0].centre]]) if obstacles else probes
    ahead.wait("locate")
    tets = mesh.locate(probes)
    for p, t in zip(probes, tets):
        where = f"tetrahedron {t}" if t >= 0 else "outside the navigable volume"
        print(f"locate ({p[0] / 1000:g}, {p[1] / 1000:g}, {p[2] / 1000:g}) km -> {where}")

    a, b = far_apart_free_points(mesh, rng)
    ahead.wait("paths")
    path = mesh.find_path(a, b)
    facts["path"] = {"start": a, "goal": b, "status": path.status,
                     "length": path.length if path.found else None,
                     "n_points": len(path.points)}
    print(f"path ({', '.join(f'{x / 1000:.1f}' for x in a)}) -> "
          f"({', '.join(f'{x / 1000:.1f}' for x in b)}) km: {path.status}, "
          f"{len(path.tets)} tetrahedra, cost {path.cost / 1000:.1f} km, "
          f"smoothed length {path.length / 1000:.1f} km "
          f"(straight line {np.linalg.norm(b - a) / 1000:.1f} km), "
          f"{len(path.points)} waypoints")
    ahead.wait("radius")
    _finish_report(ahead)
    _radius_path(mesh, rng)

    from ..export.render import render
    render(mesh, png, path=(a, b))
    print(f"drew {png}")
    _write_examples(mesh, args)
    print(f"done in {time.perf_counter() - t0:.1f} s; try: regn info {out}")
    return 0 if report.ok and path.found else 1
