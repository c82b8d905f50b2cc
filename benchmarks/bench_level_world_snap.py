"""Reaching the walls in a level WORLD: the room of bench_level_snap.py (a
closed 100 x 100 x 30 m box with two crates, agent radius 1) built as one
REGN and as a world of 50 m tiles.

    python benchmarks/bench_level_world_snap.py OUT_DIR [--workers 2] [--tile-size 50]

Each build runs in a fresh process (wall seconds; the world's tiles'
seconds summed from its manifest, whose workers' CPU ``os.wait4`` does not
see). Prints for each: coverage of the free volume, the floor (the lowest
point inside the map, in 1 cm steps, at the four places of
bench_level_snap.py and over a 2 m grid of the room's floor off the crates:
median, 90th percentile, worst; the agent's centre can go down to 1 m), for
the world the linked shared-wall fractions (faces, area) and
``regn.world.verify --strict``, and a sphere's path (radius 2 m beyond the
agent's) from near the floor in one corner to the far one at the same
height; and breaches: points of every tile's tetrahedra (corners, centroid
and 24 random points of each) nearer the room's triangles than the agent
radius less 1 cm (the snap's own exact distance kernel). ``--no-snap``: the
world's tiles keep their voxel corners.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_level_snap import room_obj  # noqa: E402

SINGLE = """
import json, sys
import regn
from regn.levels import generate_level, read_soup
m = generate_level(None, read_soup(sys.argv[1]), agent_radius=float(sys.argv[2]))
regn.save(m, sys.argv[3])
print(json.dumps({"coverage": m.build_report.get("coverage")}))
"""

WORLD = """
import json, sys
import regn.world
from regn.levels import read_soup
m = regn.world.build(None, level=read_soup(sys.argv[1]), agent_radius=float(sys.argv[2]),
                     out=sys.argv[3], tile_size=float(sys.argv[4]), workers=int(sys.argv[5]),
                     level_options={"snap": sys.argv[6] == "1"})
b = m.build
doc = {k: b.get(k) for k in ("coverage", "linked_wall_fraction", "linked_wall_area_fraction",
                             "tiles", "seconds")}
doc["tile_seconds"] = sum(t["seconds"] for t in b["per_tile"])
doc["snap_seconds"] = sum(t["snap_seconds"] or 0.0 for t in b["per_tile"])
print(json.dumps(doc))
"""

PLACES = ((10, 10), (90, 10), (10, 90), (50, 90))
#: The sphere's radius beyond the agent's, and its path's height.
SPHERE, HEIGHT = 2.0, 3.5


def run(code, *args):
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code, *map(str, args)], stdout=subprocess.PIPE,
                         text=True)
    text = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit("build failed")
    doc = json.loads(text.strip().splitlines()[-1])
    doc.update(cpu=ru.ru_utime + ru.ru_stime, wall=time.perf_counter() - t0)
    return doc


def floors(target, places, radius=1.0):
    """The lowest height inside ``target`` (a Mesh or World) over each place."""
    z = np.arange(0.0, 10 * radius, 0.01 * radius)
    lows = []
    for x, y in places:
        inside = target.locate(np.column_stack([np.full_like(z, x), np.full_like(z, y), z])) >= 0
        lows.append(z[np.argmax(inside)] if inside.any() else np.inf)
    return np.array(lows)


def floor_grid():
    """(x, y) every 2 m over the room's floor, 2 m off its walls and the crates."""
    g = np.arange(3.0, 98.0, 2.0)
    x, y = (a.ravel() for a in np.meshgrid(g, g))
    off = ~(((x > 17) & (x < 33) & (y > 17) & (y < 33)) | ((x > 57) & (x < 78) & (y > 52) & (y < 73)))
    return np.column_stack([x[off], y[off]])


def floor_text(target):
    low = floors(target, floor_grid())
    at = floors(target, PLACES)
    return (f"floor at the four places {at.min():.3g}-{at.max():.3g} m, over the grid "
            f"median {np.median(low):.3g}, 90 % {np.percentile(low, 90):.3g}, worst {low.max():.3g} m "
            f"({100 * np.mean(low <= 1.05):.0f} % of places within 5 cm of 1 m)")


def breaches(world, level, radius=1.0, per=24):
    """``(samples, nearer than radius - 1 cm, least distance)`` over every tile."""
    from regn.levels import read_soup
    from regn.levels.snap import level_walls
    walls = level_walls(read_soup(level), [])
    rng = np.random.default_rng(0)
    n = bad = 0
    least = np.inf
    for i in range(world.n_tiles):
        tp = world.tile(i).tet_points.astype(np.float64)
        if not len(tp):
            continue
        inner = np.einsum("tpk,tkd->tpd", rng.dirichlet(np.ones(4), (len(tp), per)), tp)
        p = np.concatenate([tp, tp.mean(axis=1, keepdims=True), inner], axis=1).reshape(-1, 3)
        d = walls.nearest(p, 3 * radius)
        n, bad, least = n + len(p), bad + int((d < radius - 0.01).sum()), min(least, d.min())
    return n, bad, least


def sphere_path(target):
    p = target.find_path((10.0, 10.0, HEIGHT), (90.0, 90.0, HEIGHT), radius=SPHERE)
    return f"{'found' if p.found else 'not found'}" + (f", {p.length:.1f} m" if p.found else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tile-size", type=float, default=50.0)
    ap.add_argument("--skip-single", action="store_true")
    ap.add_argument("--no-snap", action="store_true")
    a = ap.parse_args()
    import regn
    os.makedirs(a.out, exist_ok=True)
    level = os.path.join(a.out, "room.obj")
    with open(level, "w") as f:
        f.write(room_obj(1))
    if not a.skip_single:
        rgn = os.path.join(a.out, "room.rgn")
        s = run(SINGLE, level, 1.0, rgn)
        m = regn.load(rgn)
        print(f"one REGN: coverage {100 * s['coverage']:.1f} %, {floor_text(m)}, CPU "
              f"{s['cpu']:.1f} s, wall {s['wall']:.1f} s, sphere r+{SPHERE:g} at z {HEIGHT:g}: "
              f"{sphere_path(m)}", flush=True)
    wpath = os.path.join(a.out, "world", "world.json")
    if os.path.exists(wpath):
        import shutil
        shutil.rmtree(os.path.dirname(wpath))
    w = run(WORLD, level, 1.0, wpath, a.tile_size, a.workers, 0 if a.no_snap else 1)
    from regn.world.verify import verify_world
    ok = verify_world(wpath, strict=True).ok
    world = regn.load(wpath)
    print(f"world ({'no snap, ' if a.no_snap else ''}{w['tiles']} tiles of {a.tile_size:g} m, "
          f"{a.workers} workers): coverage {100 * w['coverage']:.1f} %, {floor_text(world)}, "
          f"linked walls {100 * w['linked_wall_fraction']:.1f} % of faces, "
          f"{100 * w['linked_wall_area_fraction']:.1f} % of area, verify --strict "
          f"{'ok' if ok else 'FAILS'}, tiles {w['tile_seconds']:.1f} s summed (the snap "
          f"{w['snap_seconds']:.1f} s of them), wall "
          f"{w['wall']:.1f} s, sphere r+{SPHERE:g} at z {HEIGHT:g}: {sphere_path(world)}",
          flush=True)
    n, bad, least = breaches(world, level)
    print(f"  breaches: {bad} of {n} samples nearer the walls than 0.99 m (least {least:.4f} m)")


if __name__ == "__main__":
    main()
