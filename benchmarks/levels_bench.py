"""The levels benchmark (``bench_build.py --levels DIR``): each procedural level
of ``make_levels.py`` built at the defaults in a fresh process.

    python benchmarks/make_levels.py /tmp/levels --seed 1
    python benchmarks/bench_build.py --levels /tmp/levels [--only rooms.obj ...]

Per input: triangles or solid voxels in, seconds (read, build, total), peak
memory (the child's max RSS), tetrahedra and faces, free volume covered (of
the builder's free voxels, Monte Carlo), free regions kept and the mesh's
pieces, and BREACHES checked against the INPUT itself: 16 random points, the
centroid and the corners of every stored tetrahedron, each nearer a triangle
of the input than the agent radius minus 1 cm (libigl's exact point-mesh
distance), or inside a closed part (|generalized winding number| >= 1/2 for
the kinds whose enclosed space is solid), or, for voxels, within the radius
minus 1 cm of a solid voxel. Then the inside/outside step beside libigl's fast
winding number and trimesh's ``contains`` on the same 20 000 random points:
seconds per million points and how often each agrees with regn's solid.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

TOL = 0.01
#: Kinds whose every part is closed (enclosed space is solid, so winding tells).
CLOSED = {"field.obj"}


def _samples(mesh, per=16, seed=0):
    tp = mesh.tet_points.astype(np.float64)
    w = np.random.default_rng(seed).dirichlet(np.ones(4), size=(len(tp), per))
    inner = np.einsum("tpk,tkd->tpd", w, tp)
    return np.concatenate([tp, tp.mean(axis=1, keepdims=True), inner], axis=1).reshape(-1, 3)


def _soup_breaches(p, soup, r, closed):
    import igl
    v, f = soup.verts, soup.tris
    d2 = igl.point_mesh_squared_distance(p, v, f)[0]
    bad = np.sqrt(d2) < r - TOL
    if closed:
        w = igl.fast_winding_number(v, f, p)
        bad |= np.abs(w) >= 0.5
    return int(bad.sum())


def _voxel_breaches(p, vox, r):
    occ = np.zeros(vox.shape, bool)
    occ[tuple(vox.ijk.T)] = True
    reach = max(r - TOL, 0.0)
    dirs = np.array([[a, b, c] for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)],
                    float)
    norm = np.linalg.norm(dirs, axis=1)
    dirs[norm > 0] /= norm[norm > 0, None]
    bad = np.zeros(len(p), bool)
    for d in dirs:
        q = p + reach * d
        ijk = np.floor((q - vox.origin) / vox.size).astype(np.int64)
        inside = ((ijk >= 0) & (ijk < np.asarray(vox.shape))).all(axis=1)
        hit = np.zeros(len(p), bool)
        hit[inside] = occ[tuple(ijk[inside].T)]
        # only a point strictly inside the solid voxel (by more than TOL) counts
        frac = (q - vox.origin) / vox.size - ijk
        deep = (np.minimum(frac, 1 - frac) * vox.size > TOL).all(axis=1)
        bad |= hit & deep
    return int(bad.sum())


def _compare(soup, free, grid, r, n=20_000, seed=1):
    """The inside/outside step beside libigl and trimesh on the same points."""
    import igl
    import trimesh

    from regn.levels._tetra_kernels import points_in_grid
    p = np.random.default_rng(seed).uniform(grid.lo, grid.hi, size=(n, 3))
    ours = ~points_in_grid(p, free, grid.lo, grid.h).astype(bool)      # solid
    t = time.perf_counter()
    w = igl.fast_winding_number(soup.verts, soup.tris, p)
    t_igl = time.perf_counter() - t
    tm = trimesh.Trimesh(soup.verts, soup.tris, process=False)
    t = time.perf_counter()
    inside = tm.contains(p)
    t_tm = time.perf_counter() - t
    d = np.sqrt(igl.point_mesh_squared_distance(p, soup.verts, soup.tris)[0])
    truth = (np.abs(w) >= 0.5) | (d < r)                                 # inside or too near
    return {"points": n, "igl_fwn_s_per_M": t_igl / n * 1e6, "trimesh_s_per_M": t_tm / n * 1e6,
            "regn_solid_covers_igl_inside_or_near": float((ours | ~truth).mean()),
            "igl_agrees": float((ours == truth).mean()),
            "trimesh_agrees": float((ours == (inside | (d < r))).mean())}


def one(directory, name):
    """Build one level and print its figures as JSON (run in a child)."""
    from regn.levels import generate_level, read_soup, read_voxels
    meta = json.load(open(os.path.join(directory, "levels.json")))[name]
    path = os.path.join(directory, name)
    t0 = time.perf_counter()
    level = read_voxels(path, meta["voxel_size"]) if name.endswith(".npy") else read_soup(path)
    t_read = time.perf_counter() - t0
    bbox = meta.get("box")
    r = meta["agent_radius"]
    mesh = generate_level(bbox, level, agent_radius=r)
    rep = mesh.build_report
    t_total = time.perf_counter() - t0
    p = _samples(mesh)
    if name.endswith(".npy"):
        breaches = _voxel_breaches(p, level, r)
    else:
        breaches = _soup_breaches(p, level, r, name in CLOSED)
    out = {"input": name, "in": rep.get("triangles_in", rep.get("voxels_in")),
           "kind": rep["kind"], "read_s": t_read, "build_s": t_total - t_read, "total_s": t_total,
           "solid_s": rep["seconds"]["solid"], "voxels": rep["grid_shape"],
           "tets": rep["tets"], "faces": rep["faces"], "coverage": rep["coverage"],
           "min_block": rep["min_block"], "regions_kept": rep["free_regions_kept"],
           "regions": rep["free_regions"], "pieces": rep["mesh_components"],
           "samples_checked": len(p), "breaches": breaches, "repairs": rep.get("repairs"),
           "seconds": rep["seconds"]}
    if not name.endswith(".npy"):
        from regn.levels.build import build_level
        free, grid = build_level(bbox, level, agent_radius=r)[2]["_free"]
        out["compare"] = _compare(level, free, grid, r)
        out["solid_s_per_M_voxels"] = rep["seconds"]["solid"] / np.prod(grid.shape) * 1e6
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def run(directory, only=None):
    """Every level in a child process; one table row each."""
    names = list(json.load(open(os.path.join(directory, "levels.json"))))
    rows = []
    for name in names:
        if only and name not in only:
            continue
        proc = subprocess.run([sys.executable, __file__, directory, name], capture_output=True,
                              text=True)
        if proc.returncode:
            print(name, "FAILED", proc.stderr.strip().splitlines()[-1:])
            continue
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(json.dumps(row))
    print()
    print("input        in        total s  solid s  peak MB  tets   faces  cover  "
          "kept/regions pieces breaches")
    for r in rows:
        print(f"{r['input']:<12} {r['in']:<9} {r['total_s']:7.1f}  {r['solid_s']:7.1f}  "
              f"{r['peak_mb']:7.0f}  {r['tets']:5d}  {r['faces']:5d}  {100 * r['coverage']:4.1f}%"
              f"  {r['regions_kept']}/{r['regions']:<10} {r['pieces']:6d} {r['breaches']}")
    return rows


if __name__ == "__main__":
    one(sys.argv[1], sys.argv[2])
