"""The taut pass of paths (regn.query.paths.taut), with and without it.

    python benchmarks/bench_taut.py MAP [MAP ...] [--flights 300] [--radius R]

For each map: ``--flights`` random pairs of free points (seeded; with
``--radius``, points with that clearance), each path asked twice in one
process, the pass on and off in turn (off: ``taut_points`` returns the
polyline it is given). Prints, before -> after: points a path (median,
max), legs under 1 mm, interior turns under 1 degree, the mean of length
over the straight line, the total length's change, the median CPU time a
query, and how many paths have every leg clear (``line_of_sight``, for the
sphere when ``--radius``). Maps: ``regn demo DIR`` writes DIR/demo.rgn and
DIR/hangar.obj (``regn build --level DIR/hangar.obj --agent-radius 0.5 -o
DIR/hangar.rgn``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import regn
import regn.query.paths.taut as taut


def _shape(points):
    d = np.diff(points, axis=0)
    legs = np.linalg.norm(d, axis=1)
    cos = np.einsum("ij,ij->i", d[:-1], d[1:]) / np.maximum(legs[:-1] * legs[1:], 1e-300)
    turns = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    return legs, turns


def _run(mesh, pairs, radius):
    """Per path: (points, legs < 1 mm, turns < 1 deg, length, CPU s, clear)."""
    rows = []
    for a, b in pairs:
        t0 = time.process_time()
        p = mesh.find_path(a, b, radius=radius) if radius else mesh.find_path(a, b)
        dt = time.process_time() - t0
        if not p.found:
            rows.append(None)
            continue
        legs, turns = _shape(p.points)
        sight = mesh.line_of_sight(p.points[:-1], p.points[1:],
                                   **({"radius": radius} if radius else {}))
        rows.append((len(p.points), int((legs < 1e-3).sum()), int((turns < 1.0).sum()),
                     p.length, dt, bool(sight.all())))
    return rows


def bench(path, flights, radius, seed=7):
    mesh = regn.load(path)
    pts = mesh.random_points(2 * flights, seed=seed, **({"radius": radius} if radius else {}))
    pairs = list(zip(pts[::2], pts[1::2]))
    _run(mesh, pairs[:5], radius)                       # warm-up: kernels, landmark table
    real = taut.taut_points
    on, off = [], []
    for pair in pairs:                                  # on and off in turn
        on += _run(mesh, [pair], radius)
        taut.taut_points = lambda points, sees_from: np.asarray(points, np.float64)
        try:
            off += _run(mesh, [pair], radius)
        finally:
            taut.taut_points = real
    both = [(x, y, np.linalg.norm(b - a)) for x, y, (a, b) in zip(on, off, pairs)
            if x is not None and y is not None]
    x = np.array([r[0] for r in both], dtype=object)
    y = np.array([r[1] for r in both], dtype=object)
    straight = np.array([r[2] for r in both])

    def col(rows, k):
        return np.array([r[k] for r in rows], np.float64)
    print(f"{path} (radius {radius:g}): {len(both)} of {len(pairs)} flights found both ways")
    for name, k in (("points a path", 0),):
        print(f"  {name}: median {np.median(col(y, k)):g}, max {col(y, k).max():g} -> "
              f"median {np.median(col(x, k)):g}, max {col(x, k).max():g}")
    print(f"  legs under 1 mm: {col(y, 1).sum():g} -> {col(x, 1).sum():g}; "
          f"turns under 1 degree: {col(y, 2).sum():g} -> {col(x, 2).sum():g}")
    print(f"  length / straight line, mean: {np.mean(col(y, 3) / straight):.4f} -> "
          f"{np.mean(col(x, 3) / straight):.4f}; total length "
          f"{100 * (col(x, 3).sum() / col(y, 3).sum() - 1):+.2f} %")
    print(f"  median CPU a query: {1e3 * np.median(col(y, 4)):.2f} -> "
          f"{1e3 * np.median(col(x, 4)):.2f} ms")
    print(f"  every leg clear: {int(col(y, 5).sum())} -> {int(col(x, 5).sum())} "
          f"of {len(both)} paths")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("maps", nargs="+")
    ap.add_argument("--flights", type=int, default=300)
    ap.add_argument("--radius", type=float, default=0.0)
    a = ap.parse_args()
    for path in a.maps:
        bench(path, a.flights, a.radius)


if __name__ == "__main__":
    main()
