"""``regn build --level FILE`` / ``--voxels OCC.npy``: a REGN of a level as
users have it (see docs/building.md, "Levels").

  regn build --level LEVEL.obj|.off|.ply|.stl|.glb|.gltf [--level MORE ...]
             [--box X0 Y0 Z0 X1 Y1 Z1] [--spheres F] [--obstacles ROCK.obj]
             [--agent-radius R] [--crack W] [--voxel-size S] [--min-block M] -o OUT.rgn
  regn build --voxels OCC.npy --voxel-size S [--origin X Y Z] [--box ...] ... -o OUT.rgn
"""

from __future__ import annotations

from ..inputs.numbers import number, whole

#: The options only a level build takes.
LEVEL_OPTIONS = ("crack", "voxel_size", "origin", "min_block", "max_voxels", "cavities")


def add_arguments(p):
    g = p.add_argument_group("levels: triangle soups and voxels (see docs/building.md)")
    g.add_argument("--level", action="append", default=[], metavar="FILE",
                   help="a level's triangles (.obj .off .ply .stl .glb .gltf), open or closed, "
                   "any winding; repeat to merge files")
    g.add_argument("--voxels", metavar="OCC.npy",
                   help="a voxel level: a bool (nx,ny,nz) array or an (N,3) int array of "
                   "solid voxels (needs --voxel-size)")
    g.add_argument("--voxel-size", type=number, metavar="S",
                   help="--voxels: the voxels' edge (metres); --level: the working voxels "
                   "(default: as fine as --max-voxels allows)")
    g.add_argument("--origin", nargs=3, type=number, metavar=("X", "Y", "Z"),
                   help="--voxels: the corner of voxel (0,0,0) (default 0 0 0)")
    g.add_argument("--crack", type=number, metavar="W",
                   help="close gaps up to W metres wide as well (default 0: gaps narrower "
                   "than the agent close)")
    g.add_argument("--min-block", type=number, metavar="M",
                   help="the smallest free block kept (metres; default: the finest that fits)")
    g.add_argument("--cavities", choices=("nested", "solid", "air", "winding"),
                   help="--level: free space walled in on every side is air when as many "
                   "closed shells enclose it (mod 2) as the level's main space, else solid "
                   "(nested, the default: a sealed room's inside is air, a crate's in it "
                   "solid, a rock's in open space solid), always solid, always air, or "
                   "decided by the winding number")
    g.add_argument("--max-voxels", type=whole, metavar="N",
                   help="the working grid's most voxels (default 16777216)")


def is_level(args):
    return bool(args.level) or args.voxels is not None


def check(args):
    """RegnError for a mix that has no meaning."""
    from ..errors import RegnError
    if args.level and args.voxels:
        raise RegnError("build: give --level or --voxels, not both")
    if args.asteroids is not None or args.from_mesh is not None:
        raise RegnError("build: --level/--voxels do not mix with --asteroids or --from-mesh")
    if args.detail is not None:
        raise RegnError("build: --detail does not apply to a level (see --min-block)")
    if args.voxels is not None and args.voxel_size is None:
        raise RegnError("build: --voxels needs --voxel-size")
    if args.origin is not None and args.voxels is None:
        raise RegnError("build: --origin applies to --voxels only")


def unused_level_options(args):
    return [o for o in LEVEL_OPTIONS if getattr(args, o, None) is not None]


def inputs(args):
    """``(bbox or None, level, obstacles, options)``: what a level build reads
    (the options are :func:`regn.levels.generate_level`'s)."""
    import numpy as np

    from ..inputs.obstacles import load_obstacle_mesh, load_spheres
    from ..levels.readers import Soup, read_soup, read_voxels
    check(args)
    if args.voxels is not None:
        level = read_voxels(args.voxels, args.voxel_size, args.origin or (0.0, 0.0, 0.0))
        voxel_size = None
    else:
        soups = [read_soup(f) for f in args.level]
        level = soups[0] if len(soups) == 1 else _merge(soups, Soup, np)
        voxel_size = args.voxel_size
    obstacles = [s for f in args.spheres for s in load_spheres(f)]
    obstacles += [load_obstacle_mesh(f) for f in args.obstacles]
    options = {"crack": args.crack or 0.0, "voxel_size": voxel_size,
               "min_block": args.min_block}
    if args.cavities is not None:
        options["cavities"] = args.cavities
    if args.max_voxels is not None:
        options["max_voxels"] = args.max_voxels
    bbox = (args.box[:3], args.box[3:]) if args.box else None
    return bbox, level, obstacles, options


def run(args, dims, coverage_samples):
    """``(mesh, report)`` of a level build."""
    from ..levels.route import generate_with_level
    from ._progress import Progress
    bbox, level, obstacles, options = inputs(args)
    bar = Progress(quiet=args.json)
    try:
        mesh = generate_with_level(bbox, obstacles, level, agent_radius=args.agent_radius or 0.0,
                                   dims=dims, seed=args.seed or 0, progress=bar,
                                   coverage_samples=coverage_samples, **options)
    finally:
        bar.close()
    return mesh, dict(mesh.build_report)


def _merge(soups, Soup, np):
    base = np.cumsum([0] + [len(s.verts) for s in soups[:-1]])
    return Soup(np.concatenate([s.verts for s in soups]),
                np.concatenate([s.tris + b for s, b in zip(soups, base)]),
                "+".join(s.name for s in soups), sum(s.objects for s in soups))


def _air_at(rep):
    """Where the enclosed regions kept as air are: one point of the first,
    the others in --json."""
    pts = rep.get("cavities_air_points") or []
    if not pts:
        return ""
    at = ", ".join(f"{v:.6g}" for v in pts[0])
    return f" (one at ({at}){'; each: --json, cavities_air_points' if len(pts) > 1 else ''})"


def _overlaps(rep):
    n = rep.get("cavities_overlaps", 0)
    return f"; {n} where closed solids overlap kept solid" if n else ""


#: The solid's growth (whole voxels) this many times the agent's clearance
#: or more is said: the radius asked is no longer what closes the gaps.
COARSE_GROWTH = 4.0


def _coarse_growth(rep):
    """A note when the working voxels make the solid grow much more than the
    agent's radius (a 30 km field at 119 m voxels, radius 1 m: by 119 m)."""
    want = rep["agent_radius"] + rep["crack"] / 2
    grown = max(d * h for d, h in zip(rep["dilation_voxels"], rep["voxel_size"]))
    if want <= 0 or grown < COARSE_GROWTH * want:
        return []
    return [f"  note: the working voxels grow the solid by {grown:.4g} m, {grown / want:.0f} x "
            f"the agent's {want:g} m: gaps narrower than about {2 * grown:.4g} m are closed "
            "whatever the radius; finer voxels (--voxel-size with --max-voxels, or a "
            "smaller --box) grow it less"]


def report_lines(rep):
    """The level's lines of the text report."""
    src = f"{rep['triangles_in']} triangles ({rep['objects']} objects)" \
        if rep["kind"] == "soup" else f"{rep['voxels_in']} solid voxels"
    h = rep["voxel_size"]
    lines = [f"  level {rep['source']}: {src}; working voxels {h[0]:.4g} x {h[1]:.4g} x "
             f"{h[2]:.4g} m ({'x'.join(map(str, rep['grid_shape']))}), solid grown by "
             f"{'/'.join(map(str, rep['dilation_voxels']))} voxels (agent radius "
             f"{rep['agent_radius']:g}, crack {rep['crack']:g})",
             f"  free regions: {rep['free_components']} ({rep['cavities']} enclosed, "
             f"{rep['cavities_free']} of them kept as air{_air_at(rep)}, --cavities "
             f"{rep['cavities_rule']}{_overlaps(rep)}); smallest free block kept "
             f"{rep['min_block']:.4g} m{' (chosen to fit)' if rep.get('level_chosen') else ''}"]
    if rep.get("cavities_warning"):
        lines.append(f"  warning: {rep['cavities_warning']}")
    lines += _coarse_growth(rep)
    if "free_regions" in rep:
        lines.append(f"  passages: {rep['free_regions_kept']} of {rep['free_regions']} free "
                     f"regions kept, in {rep['mesh_components']} connected component(s)")
    if rep.get("snapped_vertices"):
        lines.append(f"  walls reached: {rep['snapped_vertices']} boundary vertices moved out "
                     f"to the agent's clearance (mean {rep['snap_mean_move']:.3g} m); nearest "
                     f"approach of a tetrahedron to the input {rep['clearance_least']:.4g} m")
    from ..levels.build import WORLD_HINT_COVERAGE
    coarser = rep.get("min_level", 0) > 0 or rep.get("min_block_share", 1.0) < 1.0
    if rep.get("level_chosen") and coarser and (rep.get("coverage") or 1.0) < WORLD_HINT_COVERAGE:
        lines.append(f"  note: one REGN holds this level only with free blocks down to "
                     f"{rep['min_block']:.4g} m, covering {100 * rep['coverage']:.1f} % of its "
                     "free volume; -o DIR/world.json builds it as a world of tiles at the "
                     "finest blocks, or with --min-block M at blocks of M and up: fewer tiles, "
                     "less covered (docs/worlds.md)")
    rp = rep.get("repairs")
    if rp:
        lines.append("  repaired: " + ", ".join(f"{v} {k.replace('_', ' ')}"
                                                for k, v in rp.items()))
    return lines
