"""Procedural levels for the levels benchmark, deterministic from a seed.

    python benchmarks/make_levels.py OUTDIR [--seed 1] [--scale 1.0]

Writes, in OUTDIR:

* ``rooms.obj``   rooms and corridors: every wall, floor and ceiling a thick
  slab (its own object), faces written as tessellated quads and n-gons; the
  rooms open onto the outside through doorways (~1e6 triangles at scale 1);
* ``station.glb`` a station of open one-sided panels around a hub (a glTF
  scene: one mesh reused by many nodes with transforms);
* ``terrain.obj`` a terrain sheet (a height field, open, ~1e6 triangles);
* ``caves.npy``   voxel caves: a bool (nx, ny, nz) occupancy array (~5e5 solid);
* ``defects.obj`` a soup with every defect: cracks narrower and wider than the
  agent, an open sheet, T-junctions, flipped, duplicated and degenerate
  triangles, interpenetrating parts, non-manifold edges;
* ``field.obj``   400 closed asteroids (icospheres) in a 100 km cube.

``levels.json`` lists each with its box, voxel size and agent radius.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np


def _quad_grid(origin, u, v, nu, nv):
    """Vertices and quads of a parallelogram tessellated nu x nv."""
    a = np.arange(nu + 1)[:, None, None] / nu
    b = np.arange(nv + 1)[None, :, None] / nv
    verts = (np.asarray(origin) + a * np.asarray(u) + b * np.asarray(v)).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(nu), np.arange(nv), indexing="ij")
    k = (i * (nv + 1) + j).ravel()
    quads = np.stack([k, k + nv + 1, k + nv + 2, k + 1], axis=1)
    return verts, quads


def _slab(lo, hi, density):
    """A closed box's six faces, each tessellated to ~``density`` quads per metre."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    e = hi - lo
    parts = []
    for ax in range(3):
        u, v = np.eye(3)[(ax + 1) % 3] * e[(ax + 1) % 3], np.eye(3)[(ax + 2) % 3] * e[(ax + 2) % 3]
        nu = max(1, int(e[(ax + 1) % 3] * density))
        nv = max(1, int(e[(ax + 2) % 3] * density))
        for side in (0, 1):
            o = lo.copy()
            o[ax] = hi[ax] if side else lo[ax]
            vv, q = _quad_grid(o, u, v, nu, nv)
            parts.append((vv, q if side else q[:, ::-1]))
    return parts


class ObjWriter:
    """Collects objects (vertices, faces of any size) and writes one OBJ."""

    def __init__(self):
        self.objects = []

    def add(self, name, verts, faces):
        self.objects.append((name, np.asarray(verts, float), [list(f) for f in faces]))

    def write(self, path):
        base = 1
        with open(path, "w") as fh:
            for name, v, faces in self.objects:
                fh.write(f"o {name}\n")
                fh.write("".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in v))
                fh.write("".join("f " + " ".join(str(i + base) for i in f) + "\n" for f in faces))
                base += len(v)

    def triangles(self):
        return sum(len(f) - 2 for _, _, faces in self.objects for f in faces)


def rooms(path, rng, scale):
    """A grid of rooms (10 m, 4 m high, 0.3 m walls) joined by doorways."""
    w = ObjWriter()
    n = max(2, int(6 * scale ** 0.5))
    room, t = 10.0, 0.3
    density = 6.0 * scale ** 0.5
    for i in range(n):
        for j in range(n):
            x0, y0 = i * room, j * room
            slabs = [((x0, y0, 0), (x0 + room, y0 + room, t)),               # floor
                     ((x0, y0, 4 - t), (x0 + room, y0 + room, 4))]          # ceiling
            for ax, off in ((0, x0), (1, y0)):                              # two walls, doors
                door = rng.uniform(2, room - 4)
                for a, b in ((0, door), (door + 2, room)):
                    lo, hi = [x0, y0, t], [x0 + room, y0 + room, 4 - t]
                    lo[ax], hi[ax] = off, off + t
                    lo[1 - ax], hi[1 - ax] = (y0 if ax == 0 else x0) + a, \
                        (y0 if ax == 0 else x0) + b
                    slabs.append((tuple(lo), tuple(hi)))
            for k, (lo, hi) in enumerate(slabs):
                for m, (v, q) in enumerate(_slab(lo, hi, density)):
                    w.add(f"r{i}_{j}_{k}_{m}", v, q)
    # an n-gon pillar in the first room
    ang = np.linspace(0, 2 * np.pi, 9)[:-1]
    ring = np.stack([5 + np.cos(ang), 5 + np.sin(ang), np.zeros(8)], 1)
    v = np.concatenate([ring + [0, 0, t], ring + [0, 0, 4 - t]])
    faces = [list(range(8))[::-1], list(range(8, 16))] + \
        [[k, (k + 1) % 8, 8 + (k + 1) % 8, 8 + k] for k in range(8)]
    w.add("pillar", v, faces)
    w.write(path)
    return {"box": [[-5, -5, -2], [n * room + 5, n * room + 5, 6]], "agent_radius": 0.4,
            "triangles": w.triangles()}


def terrain(path, rng, scale):
    """A 2 km height field, open at its edges."""
    m = int(700 * scale ** 0.5)
    x = np.linspace(0, 2000, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    Z = 40 * np.sin(X / 190) * np.cos(Y / 230) + 15 * np.sin(X / 37 + Y / 53)
    Z += rng.normal(0, 0.3, Z.shape)
    v = np.stack([X, Y, Z], -1).reshape(-1, 3)
    _, q = _quad_grid((0, 0, 0), (1, 0, 0), (0, 1, 0), m, m)
    w = ObjWriter()
    w.add("terrain", v, q)
    w.write(path)
    return {"box": [[0, 0, -80], [2000, 2000, 300]], "agent_radius": 2.0,
            "triangles": w.triangles()}


def caves(path, rng, scale):
    """Voxel caves: smoothed noise thresholded, 5 m voxels."""
    from scipy import ndimage
    n = int(120 * scale ** (1 / 3))
    noise = ndimage.gaussian_filter(rng.normal(size=(n, n, n // 2)), 3)
    occ = noise > np.quantile(noise, 0.45)
    np.save(path, occ)
    return {"voxel_size": 5.0, "agent_radius": 2.0, "voxels": int(occ.sum())}


def station(path, rng, scale):
    """A hub with open panels on spokes (a glTF scene of transformed nodes)."""
    import trimesh
    scene = trimesh.Scene()
    panel = trimesh.Trimesh(*_panel(int(40 * scale ** 0.5)), process=False)
    hub = trimesh.creation.icosphere(subdivisions=4, radius=60)
    scene.add_geometry(hub, node_name="hub")
    for k in range(int(120 * scale ** 0.5)):
        th, ph = rng.uniform(0, 2 * np.pi), np.arccos(rng.uniform(-1, 1))
        d = np.array([np.sin(ph) * np.cos(th), np.sin(ph) * np.sin(th), np.cos(ph)])
        T = trimesh.geometry.align_vectors([0, 0, 1], d)
        T[:3, 3] = d * rng.uniform(120, 400)
        scene.add_geometry(panel, node_name=f"panel{k}", transform=T)
    scene.export(path)
    return {"box": [[-500, -500, -500], [500, 500, 500]], "agent_radius": 3.0,
            "triangles": int(len(hub.faces) + len(panel.faces) * int(120 * scale ** 0.5))}


def _panel(m):
    v, q = _quad_grid((-20, -20, 0), (40, 0, 0), (0, 40, 0), m, m)
    return v, np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])


def defects(path, rng, scale):
    """Every defect kind, in a 40 m box (agent radius 0.5)."""
    w = ObjWriter()
    # a wall cracked by 0.2 m (closes) and a slot of 3 m (a passage)
    for k, (lo, hi) in enumerate([((10, 0, 0), (12, 19.9, 40)), ((10, 20.1, 0), (12, 30, 40)),
                                  ((10, 33, 0), (12, 40, 40))]):
        for m, (v, q) in enumerate(_slab(lo, hi, 0.5)):
            w.add(f"wall{k}_{m}", v, q)
    # an open sheet (floor) with T-junctions: a big quad beside two small ones
    w.add("floor", [[0, 0, 2], [20, 0, 2], [20, 20, 2], [0, 20, 2], [20, 10, 2], [30, 0, 2],
                    [30, 10, 2], [30, 20, 2]],
          [[0, 1, 2, 3], [1, 5, 6, 4], [4, 6, 7, 2]])
    # a closed rock with flipped faces, duplicates and degenerate triangles
    ico_v, ico_f = _icosphere(2)
    ico_v = ico_v * 4 + [25, 30, 20]
    f = ico_f.copy()
    flip = rng.choice(len(f), len(f) // 10, replace=False)
    f[flip] = f[flip, ::-1]
    f = np.concatenate([f, f[:20], [[0, 0, 1], [1, 2, 2]]])
    w.add("rock", ico_v, f)
    # two interpenetrating boxes (non-manifold where they share a face)
    for k, (lo, hi) in enumerate([((28, 5, 10), (34, 11, 16)), ((31, 8, 13), (37, 14, 19)),
                                  ((37, 8, 13), (39, 14, 19))]):
        for m, (v, q) in enumerate(_slab(lo, hi, 0.2)):
            w.add(f"box{k}_{m}", v, q)
    w.write(path)
    return {"box": [[0, 0, 0], [40, 40, 40]], "agent_radius": 0.5, "triangles": w.triangles()}


def _icosphere(sub):
    import trimesh
    m = trimesh.creation.icosphere(subdivisions=sub)
    return np.asarray(m.vertices), np.asarray(m.faces)


def field(path, rng, scale):
    """400 closed icosphere asteroids (radius 0.5-3 km) in a 100 km cube."""
    w = ObjWriter()
    v0, f0 = _icosphere(3)
    for k in range(400):
        c = rng.uniform(-45_000, 45_000, 3)
        r = rng.uniform(500, 3000)
        w.add(f"a{k}", v0 * r * rng.uniform(0.8, 1.2, 3) + c, f0)
    w.write(path)
    return {"box": [[-50_000] * 3, [50_000] * 3], "agent_radius": 50.0,
            "triangles": w.triangles()}


MAKERS = {"rooms.obj": rooms, "station.glb": station, "terrain.obj": terrain,
          "caves.npy": caves, "defects.obj": defects, "field.obj": field}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="size multiplier (1: ~1e6 triangles for rooms and terrain)")
    ap.add_argument("--only", nargs="*", help="file names to make (default all)")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    meta = {}
    for name, make in MAKERS.items():
        if args.only and name not in args.only:
            continue
        rng = np.random.default_rng([args.seed, len(name)])
        meta[name] = make(os.path.join(args.outdir, name), rng, args.scale)
        print(name, meta[name])
    with open(os.path.join(args.outdir, "levels.json"), "w") as fh:
        json.dump(meta, fh, indent=1)


if __name__ == "__main__":
    main()
