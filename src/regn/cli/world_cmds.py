"""What the map commands print for a world's manifest (regn.world)."""

from __future__ import annotations

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
    lo, hi = np.asarray(s["box"][0]), np.asarray(s["box"][1])
    print(f"{args.file}: regn world, {s['tiles']} tiles {'x'.join(map(str, s['grid']))} "
          f"of {' x '.join(f'{v / 1000:g}' for v in s['tile_size'])} km, "
          f"{s['bytes']} bytes of tiles")
    print(f"  box {lo.tolist()} .. {hi.tolist()}  ({' x '.join(f'{v:g}' for v in (hi - lo) / 1000)} km)")
    print(f"  {s['tets']} tetrahedra, {s['faces']} faces; {s['links']} links "
          f"({s['linked_faces']} face pairs), {s['portal_nodes']} portal nodes")
    if s["coverage"] is not None:
        print(f"  free-volume coverage {100 * s['coverage']:.2f} % (at build)")
    return 0
