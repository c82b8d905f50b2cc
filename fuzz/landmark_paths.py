"""find_path with the landmark table against scipy's Dijkstra, on many queries
of one map (not part of the tests: minutes).

    python fuzz/landmark_paths.py MAP.rgn [N]

Five rounds of N queries (default 2000): no options, a random cost_scale in
[0.01, 20], one in [3, 5] (every factor above 1), 10 % of the tetrahedra
excluded, and a scale with 5 % excluded. A quarter of the starts lie exactly
on faces. Each cost must equal the Dijkstra optimum on the same face graph
to 1e-11 relative. The table is built first (it needs a map of at least
2 000 faces, such as the demo map).
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import numpy as np  # noqa: E402

import regn  # noqa: E402
from scipy.sparse import coo_matrix  # noqa: E402
from scipy.sparse.csgraph import dijkstra  # noqa: E402
from test_path_search import _portal_edges  # noqa: E402
from regn.query.paths.path import _graph, ensure_landmarks  # noqa: E402

def check(mesh, n, seed, scale=None, excl=None):
    """(queries checked, mismatches) of n queries against Dijkstra."""
    g = _graph(mesh)
    ensure_landmarks(g)
    if g["graph"].landmarks.shape[1] == 0:
        raise SystemExit("this map gets no landmark table (fewer than 2 000 faces?)")
    fi, fj, w = _portal_edges(mesh, scale, excl)
    F = mesh.n_faces
    M = coo_matrix((w + 1e-300, (fi, fj)), shape=(F, F)).tocsr()
    M = M.maximum(M.T)
    rng = np.random.default_rng(seed)
    A, B = mesh.random_points(n, seed=seed), mesh.random_points(n, seed=seed + 1)
    k = n // 4                            # a quarter of the starts on faces
    V = np.asarray(mesh.vertices, float)
    fv = np.asarray(mesh.face_vertices)[rng.integers(F, size=k)]
    A[:k] = np.einsum("nk,nkd->nd", rng.dirichlet(np.ones(3), k), V[fv])
    S, G = mesh.locate(A), mesh.locate(B)
    cen, tf, nb = mesh.face_centroids, mesh.tet_faces, mesh.neighbors
    bad = checked = 0
    for i in range(n):
        if S[i] < 0 or G[i] < 0 or S[i] == G[i]:
            continue
        if excl is not None and (excl[S[i]] or excl[G[i]]):
            continue
        fs, fg = tf[S[i]][nb[S[i]] >= 0], tf[G[i]][nb[G[i]] >= 0]
        ds = np.linalg.norm(cen[fs] - A[i], axis=1)
        dg = np.linalg.norm(cen[fg] - B[i], axis=1)
        ref = np.min(ds[:, None] + dijkstra(M, indices=fs)[:, fg] + dg[None, :])
        p = mesh.find_path(A[i], B[i], smooth=False, cost_scale=scale, exclude=excl)
        got = p.cost if p.found else np.inf
        checked += 1
        if not (np.isinf(ref) and np.isinf(got)) and not abs(got - ref) <= 1e-11 * max(ref, 1):
            bad += 1
            print(f"query {i}: cost {got!r}, Dijkstra {ref!r}")
    return checked, bad


def main():
    m = regn.load(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rng = np.random.default_rng(0)
    g = _graph(m)
    t = time.perf_counter()
    ensure_landmarks(g)
    table = g["graph"].landmarks
    print(f"{m.n_faces} faces: landmark table {table.shape[1]} x uint16 per face, "
          f"quantum {g['graph'].quantum:g} m, built in {time.perf_counter() - t:.3f} s")
    t = time.perf_counter()
    total = 0
    for label, sc, ex in [("no options", None, None),
                          ("scale 0.01-20", rng.uniform(0.01, 20, m.n_tets), None),
                          ("scale 3-5 (all above 1)", rng.uniform(3, 5, m.n_tets), None),
                          ("10 % excluded", None, rng.random(m.n_tets) < 0.1),
                          ("scale and 5 % excluded", rng.uniform(0.5, 3, m.n_tets),
                           rng.random(m.n_tets) < 0.05)]:
        c, b = check(m, n, 7, sc, ex)
        total += b
        print(f"{label}: {c} checked, {b} mismatches ({time.perf_counter() - t:.0f} s)",
              flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
