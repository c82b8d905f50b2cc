"""What the map commands print for a world's manifest (regn.world)."""

from __future__ import annotations

import os

import numpy as np

from ._common import print_json


def world_summary(world) -> dict:
    m = world.manifest
    b = m.build or {}
    return {"path": m.path, "world": True, "tiles": len(m.tiles), "grid": list(m.grid),
            "box": [m.lo.tolist(), m.hi.tolist()], "tile_size": m.tile_size.tolist(),
            "tets": int(world.tet_offset[-1]), "faces": int(world.face_offset[-1]),
            "links": len(m.links), "linked_faces": int(sum(len(lk.faces) for lk in m.links)),
            "portal_nodes": len(m.node_points), "bytes": int(sum(t.bytes for t in m.tiles)),
            "agent_radius": m.agent_radius, "coverage": b.get("coverage"),
            "tile_files": [t.file for t in m.tiles]}


def world_info(args) -> int:
    from ..world.world import load_world
    world = load_world(args.file)
    s = world_summary(world)
    if args.json:
        print_json(s)
        return 0
    from ..units import unit_for_box
    lo, hi = np.asarray(s["box"][0]), np.asarray(s["box"][1])
    unit = unit_for_box(lo, hi)         # metres for a level's world, km for a field's
    print(f"{args.file}: regn world, {s['tiles']} tiles {'x'.join(map(str, s['grid']))} "
          f"of {' x '.join(f'{v:g}' for v in unit.scale(s['tile_size']))} {unit.name}, "
          f"{s['bytes']} bytes of tiles")
    print(f"  box {lo.tolist()} .. {hi.tolist()}  "
          f"({' x '.join(f'{v:g}' for v in unit.scale(hi - lo))} {unit.name})")
    print(f"  {s['tets']} tetrahedra, {s['faces']} faces; {s['links']} links "
          f"({s['linked_faces']} face pairs), {s['portal_nodes']} portal nodes")
    if s["coverage"] is not None:
        print(f"  free-volume coverage {100 * s['coverage']:.2f} % (at build)")
    return 0


def build_world(args, mode, obstacles_of, progress_bar) -> int:
    """``regn build ... -o DIR/NAME.json``: a world of tiles (regn.world.build)."""
    from ..errors import ExportError, RegnError
    from ..world.building import OutputExists, build
    if mode == "from_mesh":
        raise RegnError("build: a world is built from obstacles (--box/--asteroids), "
                        "not --from-mesh")
    if not args.output.lower().endswith(".json"):
        raise RegnError(f"build: --tile-size writes a world: its manifest is a .json file, "
                        f"not {args.output}")
    level = options = None
    if mode == "level":
        from ._level_build import inputs
        bbox, level, obstacles, options = inputs(args)
    else:
        bbox, obstacles = obstacles_of(args, mode)
    made_folder = not os.path.isdir(os.path.dirname(os.path.abspath(args.output)))
    bar = progress_bar(quiet=args.json)
    try:
        m = build(bbox, obstacles, out=args.output, level=level, level_options=options,
                  tile_size="auto" if args.tile_size is None else args.tile_size,
                  agent_radius=args.agent_radius or 0.0,
                  dims=tuple(args.dims) if args.dims else None, detail=args.detail,
                  seed=args.seed or 0, workers=args.workers, client=args.scheduler,
                  coverage_samples=(20_000 if args.coverage_samples is None
                                    else args.coverage_samples),
                  force=args.force, progress=bar)
    except OutputExists as e:          # the words of every command's refusal
        raise ExportError(f"{e.path}: exists; pass --force to overwrite it") from None
    finally:
        bar.close()
    rep = dict(m.build)
    rep["output"] = args.output
    if args.json:
        print_json(rep)
        return 0
    s = rep["seconds"]
    n = rep["tiles"]
    print(f"wrote {args.output} and {n} tile{'' if n == 1 else 's'} "
          f"{'x'.join(map(str, rep['grid']))}"
          + (f" (made the folder {os.path.dirname(args.output)})" if made_folder else ""))
    if rep.get("removed"):
        k = len(rep["removed"])
        print(f"  removed {k} file{'' if k == 1 else 's'} of the world it replaced "
              f"({', '.join(rep['removed'][:4])}{', ...' if k > 4 else ''})")
    print(f"  {rep['tets']} tetrahedra, {rep['faces']} faces; "
          + (f"{100 * rep['linked_wall_fraction']:.2f} % of the shared walls' faces linked"
             + (f" ({100 * rep['linked_wall_area_fraction']:.2f} % of their area)"
                if rep.get("linked_wall_area_fraction") is not None else "")
             if n > 1 else "no shared walls"))
    if rep.get("coverage") is not None:
        print(f"  free-volume coverage {100 * rep['coverage']:.2f} % (Monte Carlo, per tile)")
    worst = max(rep["per_tile"], key=lambda t: t["seconds"])
    print(f"  slowest tile {'_'.join(map(str, worst['index']))}: {worst['seconds']:.2f} s, "
          f"peak memory of a worker {max(t['peak_rss'] for t in rep['per_tile']) / 2**20:.0f} MiB")
    if rep.get("level"):
        print(_level_line(rep["level"]))
    print("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
    return 0


def _level_line(lv):
    src = f"{lv['triangles_in']} triangles" if lv["kind"] == "soup" else \
        f"{lv['voxels_in']} solid voxels"
    h = lv["voxel_size"]
    return (f"  level {lv['source']}: {src}; working voxels {h[0]:.4g} x {h[1]:.4g} x "
            f"{h[2]:.4g} m ({'x'.join(map(str, lv['grid_shape']))}), tiles of "
            f"{'x'.join(map(str, lv['tile_voxels']))} voxels, wall leaves of "
            f"{2 ** lv['wall_level']} voxels and up; solid in {lv['solid_seconds']:.2f} s")
