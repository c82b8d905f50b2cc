"""``regn build``: a REGN (or a world of tiles) from obstacles, a random asteroid field, a level, or a tet mesh.

  regn build --box X0 Y0 Z0 X1 Y1 Z1 [--spheres F.csv|F.json] [--obstacles A.obj ...]
             [--agent-radius R] [--dims NX NY NZ] [--detail D] [--seed S] -o OUT.rgn
  regn build --asteroids N [--seed S] [--half-extent H | --box ...] -o OUT.rgn
  regn build --from-mesh MESH.msh|.vtu|.vtk|.xdmf|.mesh [--box ...] [--dims ...] -o OUT.rgn
  regn build --level LEVEL.obj|.glb|... [--box ...] [--agent-radius R] [--crack W] -o OUT.rgn
  regn build --voxels OCC.npy --voxel-size S [--origin X Y Z] [--box ...] -o OUT.rgn

--level takes a level as games and editors export it (open sheets, cracks,
any winding; a soup of 10^6 triangles); --voxels a voxel occupancy array.
--obstacles stays for closed rocks (mixed with a --level, they join it).
-o DIR/NAME.json (or --tile-size S) builds a world of REGN tiles and its
manifest instead (docs/worlds.md).

The result always fits the format: without --detail and --dims, regn takes the
highest detail from 1 down and the finest grid from about 10 km cells (a
tenth of the longest side of a box under 50 km) down that fit, and says what
it chose. Given ones are kept, or refused with a value that fits. The box given is the box written (when float32 cannot hold it
exactly, the report says what moved and by how much).

Prints a build report (counts, detail and grid, free-volume coverage,
clearance check, seconds per stage; --json for JSON). An existing OUT is
refused without --force.
"""

from __future__ import annotations

import time

from ..inputs.numbers import number, whole
from ._common import plain

#: Monte Carlo samples of the coverage figure, unless told.
COVERAGE_SAMPLES = 200_000
#: The most asteroids --asteroids takes (each needs sample points around it,
#: so far fewer fit the format).
MAX_ASTEROIDS = 65_535
#: Options of the obstacle modes (not of --from-mesh), as argparse names them.
OBSTACLE_OPTIONS = ("spheres", "obstacles", "half_extent", "agent_radius", "detail", "seed",
                    "coverage_samples")


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=plain(__doc__.split("\n\n")[0]),
                       epilog=plain(__doc__.split("\n\n", 1)[1]),
                       formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    src = p.add_argument_group("what to build (one of these, or --level / --voxels below)")
    src.add_argument("--box", nargs=6, type=number, metavar=("X0", "Y0", "Z0", "X1", "Y1", "Z1"),
                     help="the play volume's box (metres); with --asteroids, the box the field "
                          "fills")
    src.add_argument("--asteroids", type=whole, metavar="N",
                     help="a random asteroid field of N spheres (see --seed, --half-extent, --box)")
    src.add_argument("--from-mesh", metavar="MESH",
                     help="an existing tetrahedral mesh (anything meshio reads, or regn's "
                          ".xdmf; tetra cells)")
    p.add_argument("--spheres", action="append", default=[], metavar="FILE",
                   help="sphere obstacles: CSV x,y,z,radius (optional header) or JSON list")
    p.add_argument("--obstacles", nargs="+", default=[], metavar="MESH",
                   help="closed triangle-surface obstacles (.obj .ply .stl .off)")
    p.add_argument("--half-extent", type=number, metavar="H",
                   help="--asteroids: the cube +-H (default 50000; or give --box)")
    p.add_argument("--agent-radius", type=number, metavar="R",
                   help="inflate every obstacle by R (default 0)")
    p.add_argument("--dims", nargs=3, type=whole, metavar=("NX", "NY", "NZ"),
                   help="grid cells per axis (default: the finest from about 10 km cells or a "
                   "tenth of a smaller box, "
                   "at most 10, down whose cell references fit)")
    p.add_argument("--detail", type=number, metavar="D",
                   help="sampling density multiplier; higher keeps more of the free volume "
                   "(default: the highest from 1 down that fits)")
    p.add_argument("--seed", type=whole, metavar="S",
                   help="jitter / asteroid seed, >= 0 (default 0)")
    p.add_argument("--coverage-samples", type=whole, metavar="N",
                   help="Monte Carlo samples for the coverage figure (0 skips it; "
                   f"default {COVERAGE_SAMPLES}, at most 100000000)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.rgn",
                   help="file to write; OUT.json builds a world of tiles beside it")
    world = p.add_argument_group("a world of tiles (-o DIR/NAME.json; docs/worlds.md)")
    world.add_argument("--tile-size", type=number, metavar="S",
                       help="tiles of S metres (default: the fewest whose sample fits a REGN)")
    world.add_argument("--workers", type=whole, metavar="N",
                       help="tiles built at once on this machine (default: one per core)")
    world.add_argument("--scheduler", metavar="ADDR",
                       help="build the tiles on this dask.distributed scheduler "
                            "(tcp://host:8786) instead")
    p.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    from . import _level_build
    _level_build.add_arguments(p)
    p.set_defaults(func=run)


def _text_report(out, rep):
    s = rep.get("seconds", {})
    lines = [f"wrote {out}"]
    lines.append(f"  {rep['vertices']} vertices, {rep['tets']} tetrahedra, {rep['faces']} faces, "
                 f"{rep['cells']} cells {'x'.join(map(str, rep['dims']))}"
                 f"{' (chosen to fit)' if rep.get('dims_chosen') else ''}, "
                 f"{rep['refs']} cell refs")
    if "obstacles" in rep:
        lines.append(f"  {rep['obstacles']} obstacles, agent radius {rep['agent_radius']:g}, "
                     f"detail {rep['detail']:.3g}"
                     f"{' (chosen to fit)' if rep.get('detail_chosen') else ''}; "
                     f"{rep['sample_points']} sample points, "
                     f"{rep['delaunay_tets']} Delaunay tets ({rep['dropped_obstacle']} meet an "
                     f"obstacle, {rep['dropped_degenerate']} degenerate, "
                     f"{rep['dropped_slivers']} surface slivers, "
                     f"{rep['dropped_pinching']} pinching, "
                     f"{rep['dropped_specks']} in specks dropped)")
    if rep.get("box_change"):
        lines.append(_box_moved_line(rep))
    if rep.get("coverage") is not None:
        lines.append(f"  free-volume coverage {100 * rep['coverage']:.2f} % "
                     f"({rep['coverage_samples']} Monte Carlo samples)")
    if "clearance_violations" in rep:
        lines.append("  clearance check: " + ("pass (no tetrahedron meets an inflated obstacle)"
                                              if rep["clearance_ok"] else
                                              f"FAIL ({rep['clearance_violations']} tetrahedra)"))
    if rep.get("pinch_edges") or rep.get("pinch_vertices"):
        lines.append(f"  warning: the boundary is pinched ({rep['pinch_edges']} edges, "
                     f"{rep['pinch_vertices']} vertices where tetrahedra meet only there)")
    if "kind" in rep:
        from ._level_build import report_lines
        lines[2:2] = report_lines(rep)
    if "components" in rep:
        lines.append(f"  {rep['components']} connected component(s)")
    if s:
        lines.append("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
    return "\n".join(lines)


def _box_moved_line(rep):
    """One short line for a box float32 had to move (every corner's move is
    in the --json report's ``box_change``)."""
    moved = rep.get("box_moved_m")
    if moved is None:                   # a report without the figure: the detail
        return f"  {rep['box_change']}"
    return (f"  box widened by at most {moved:.2g} m so that whole float32 cells span it "
            "(each corner's move: --json, box_change)")


def _mode(args):
    """'box', 'asteroids' or 'from_mesh'; RegnError for a mix, or an option
    that does not apply."""
    from ..errors import RegnError
    modes = [m for m in ("box", "asteroids", "from_mesh") if getattr(args, m) is not None]
    if args.asteroids is not None and args.box is not None:
        modes.remove("box")                     # --asteroids in a custom box
    if len(modes) != 1:
        raise RegnError("build: give exactly one of --box, --asteroids N, --from-mesh MESH, "
                        "--level LEVEL, --voxels OCC.npy (see regn build --help)")
    mode = modes[0]
    unused = [o for o in OBSTACLE_OPTIONS if getattr(args, o) not in (None, [])]
    if mode != "from_mesh":
        unused = ["half_extent"] if mode == "box" and args.half_extent is not None else []
    if unused:
        names = ", ".join("--" + o.replace("_", "-") for o in unused)
        raise RegnError(f"build: {names} {'does' if len(unused) == 1 else 'do'} not apply "
                        f"with --{mode.replace('_', '-')}")
    return mode


def _from_mesh(args, dims):
    from ..builder.from_meshio import from_mesh_file
    t0 = time.perf_counter()
    bbox = (args.box[:3], args.box[3:]) if args.box else None
    mesh = from_mesh_file(args.from_mesh, bbox=bbox, dims=dims)
    rep = dict(mesh.build_report)
    rep.update({"vertices": mesh.n_vertices, "tets": mesh.n_tets, "faces": mesh.n_faces,
                "cells": mesh.n_cells, "refs": mesh.n_refs, "source": args.from_mesh,
                "seconds": {"total": time.perf_counter() - t0}})
    return mesh, rep


def _obstacles(args, mode):
    """``(bbox, obstacles)`` of an obstacle mode."""
    from ..builder.frame import check_float32_box
    from ..builder.obstacles import random_asteroid_field
    from ..errors import RegnError
    from ..inputs.obstacles import load_obstacle_mesh, load_spheres
    obstacles = []
    if mode == "asteroids":
        if args.box and args.half_extent is not None:
            raise RegnError("build: give --half-extent or --box, not both")
        h = 50_000.0 if args.half_extent is None else float(args.half_extent)
        if not h > 0:
            raise RegnError(f"--half-extent must be > 0, got {args.half_extent}")
        if not 0 <= args.asteroids <= MAX_ASTEROIDS:
            raise RegnError(f"--asteroids must be in 0..{MAX_ASTEROIDS}, got {args.asteroids}")
        bbox = (args.box[:3], args.box[3:]) if args.box else ((-h,) * 3, (h,) * 3)
        check_float32_box(*bbox)
        import numpy as np
        lo, hi = np.asarray(bbox[0], np.float64), np.asarray(bbox[1], np.float64)
        # the field fills the box it is built in, whatever its shape
        obstacles += random_asteroid_field(args.asteroids, seed=args.seed or 0,
                                           half_extent=(hi - lo) / 2, centre=(lo + hi) / 2)
    else:
        bbox = (args.box[:3], args.box[3:])
    for f in args.spheres:
        obstacles += load_spheres(f)
    for f in args.obstacles:
        obstacles.append(load_obstacle_mesh(f))
    return bbox, obstacles


def _generate(args, mode, dims):
    from ..builder.generate import FEWER_OBSTACLES, generate
    from ..errors import LimitError
    bbox, obstacles = _obstacles(args, mode)
    from ._progress import Progress
    bar = Progress.for_args(args)
    try:
        mesh = generate(bbox, obstacles, agent_radius=args.agent_radius or 0.0, dims=dims,
                        detail=args.detail, seed=args.seed or 0, progress=bar,
                        coverage_samples=(COVERAGE_SAMPLES if args.coverage_samples is None
                                          else args.coverage_samples))
    except LimitError as e:
        if mode == "asteroids" and str(e).endswith(FEWER_OBSTACLES):
            raise LimitError(f"{str(e)[:-len(FEWER_OBSTACLES)]}use fewer asteroids "
                             "(--asteroids)", what=e.what, count=e.count) from None
        raise
    finally:
        bar.close()
    return mesh, dict(mesh.build_report)


def run(args) -> int:
    from ..errors import RegnError
    from ..io import save
    from . import _level_build
    from ._common import check_output
    level = _level_build.is_level(args)
    mode = "level" if level else _mode(args)
    if not level and _level_build.unused_level_options(args):
        unused = _level_build.unused_level_options(args)
        names = ", ".join("--" + o.replace("_", "-") for o in unused)
        raise RegnError(f"build: {names} only appl{'ies' if len(unused) == 1 else 'y'} with "
                        "--level or --voxels")
    inputs = [args.from_mesh, *args.spheres, *args.obstacles, *args.level, args.voxels]
    if args.output.lower().endswith(".json") or args.tile_size is not None:
        from .._atomic import note_input
        from ._progress import Progress
        from .world_cmds import build_world
        for source in inputs:          # (no tile nor manifest is written over them)
            if source is not None:
                note_input(source)
        return build_world(args, mode, _obstacles, Progress)
    check_output(args.output, inputs, args.force)
    dims = tuple(args.dims) if args.dims else None
    if level:
        mesh, rep = _level_build.run(args, dims, COVERAGE_SAMPLES if args.coverage_samples
                                     is None else args.coverage_samples)
    elif mode == "from_mesh":
        mesh, rep = _from_mesh(args, dims)
    else:
        mesh, rep = _generate(args, mode, dims)
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
