"""Semantic difference of two REGN meshes.

Records are matched by what they are, not by where they are stored:
vertices by position, tetrahedra by the sorted tuple of their vertices'
positions, faces by the sorted positions of their three vertices, a portal
cost by the pair of faces it joins, a cell's list as a set of tetrahedron
keys. Renumbering alone therefore shows up as no difference at all.
"""

from __future__ import annotations

import numpy as np

from ..format.layout import PORTAL_PAIRS
from ..geometry.graph import components


def _pos_ids(va: np.ndarray, vb: np.ndarray):
    """Common ids for the vertex positions of both meshes (exact f32 equality)."""
    allv = np.concatenate([va, vb]).astype(np.float32)
    _, inv = np.unique(allv, axis=0, return_inverse=True)
    inv = inv.ravel()
    return inv[:len(va)], inv[len(va):]


def _row_ids(a: np.ndarray, b: np.ndarray):
    """Common ids of the rows of two integer arrays."""
    allr = np.concatenate([a, b])
    if not len(allr):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    _, inv = np.unique(allr, axis=0, return_inverse=True)
    inv = inv.ravel()
    return inv[:len(a)], inv[len(a):], int(inv.max()) + 1


def _component_summary(mesh):
    n, labels = components(mesh.neighbors)
    sizes = np.bincount(labels) if len(labels) else np.zeros(0, np.int64)
    vols = np.bincount(labels, weights=mesh.tet_volumes) if len(labels) else sizes
    order = np.argsort(-sizes, kind="stable")
    return {"count": n, "sizes": [int(sizes[i]) for i in order],
            "pockets": [{"tets": int(sizes[i]), "volume": float(vols[i])} for i in order[1:]]}


def diff(a, b, *, tol: float = 0.0) -> dict:
    """Differences between meshes ``a`` and ``b`` as a dict; ``same`` says whether any."""
    out: dict = {}
    changes: list[str] = []
    out["header"], out["encoding"] = _header_diff(a, b)   # encoding: not a mesh difference
    if set(out["header"]) - {"counts"}:
        changes.append("header/grid")
    out["vertices"], ida, idb = _vertex_diff(a, b, tol)
    v = out["vertices"]
    if v["added"] or v["removed"] or v.get("moved"):
        changes.append("vertices")
    out["tets"], ka, kb = _tet_diff(a, b, ida, idb)
    if out["tets"]["added"] or out["tets"]["removed"]:
        changes.append("tets")
    out["faces"], fa, fb = _face_diff(a, b, ida, idb, ka, kb)
    f = out["faces"]
    if f["added"] or f["removed"] or f["adjacency_changed"]:
        changes.append("faces")
    out["portal_costs"] = _portal_diff(a, b, ka, kb, fa, fb)
    if out["portal_costs"]["changed"]:
        changes.append("portal costs")
    out["cells"] = _cell_diff(a, b, ka, kb)
    if out["cells"]["changed"]:
        changes.append("cells")
    out["components"] = {"a": _component_summary(a), "b": _component_summary(b)}
    if out["components"]["a"]["count"] != out["components"]["b"]["count"]:
        changes.append("components")
    out["changes"] = changes
    out["same"] = not changes
    return out


def _header_diff(a, b):
    """(header/grid differences, encoding differences)."""
    hdr = {}
    for name in ("bbox_min", "bbox_max", "cell_size"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        if not np.array_equal(x, y):
            hdr[name] = {"a": x.tolist(), "b": y.tolist()}
    if tuple(a.dims) != tuple(b.dims):
        hdr["dims"] = {"a": list(a.dims), "b": list(b.dims)}
    if tuple(a.counts) != tuple(b.counts):
        hdr["counts"] = {"a": list(a.counts), "b": list(b.counts)}
    enc = {}
    endian = {">": "big", "<": "little"}
    for name in ("byte_order", "pof0_dialect"):
        x, y = getattr(a, name), getattr(b, name)
        if x != y:
            enc[name] = ({"a": endian[x], "b": endian[y]} if name == "byte_order"
                         else {"a": x, "b": y})
    return hdr, enc


def _vertex_diff(a, b, tol):
    """(vertex differences, position ids of a's and b's vertices)."""
    va, vb = np.asarray(a.vertices), np.asarray(b.vertices)
    ida, idb = _pos_ids(va, vb)
    vert = {"a": len(va), "b": len(vb)}
    if len(va) == len(vb) and len(va):
        d = np.linalg.norm(va - vb, axis=1)
        moved = d > tol
        # a vertex that moved (same index, old position gone, new one new) keeps
        # its identity, so its tetrahedra count as reshaped rather than replaced
        gone = ~np.isin(ida, idb)
        new = ~np.isin(idb, ida)
        same_vertex = (d > 0) & gone & new
        idb = idb.copy()
        idb[same_vertex] = ida[same_vertex]
        vert["moved"] = int(moved.sum())
        vert["max_move"] = float(d.max())
        vert["mean_move"] = float(d[moved].mean()) if moved.any() else 0.0
        if moved.any():
            vert["moved_indices"] = np.flatnonzero(moved)[:20].tolist()
    vert["added"] = int(len(np.setdiff1d(idb, ida)))
    vert["removed"] = int(len(np.setdiff1d(ida, idb)))
    return vert, ida, idb


def _sorted_ids(ids, mesh, rows, width):
    """Each row of the mesh's (T,width) vertex-index array ``rows`` ("tets",
    "face_vertices") as the sorted position ids of its vertices."""
    if not (mesh.n_tets if rows == "tets" else mesh.n_faces):
        return np.zeros((0, width), np.int64)
    return np.sort(ids[np.asarray(getattr(mesh, rows))], axis=1)


def _tet_diff(a, b, ida, idb):
    """(tetrahedron differences, keys of a's and b's tetrahedra): a
    tetrahedron is keyed by its sorted vertex positions."""
    ka, kb, _ = _row_ids(_sorted_ids(ida, a, "tets", 4), _sorted_ids(idb, b, "tets", 4))
    sa, sb = set(ka.tolist()), set(kb.tolist())
    added, removed = sorted(sb - sa), sorted(sa - sb)
    inv_b = {k: i for i, k in enumerate(kb.tolist())}
    inv_a = {k: i for i, k in enumerate(ka.tolist())}
    return ({"a": int(a.n_tets), "b": int(b.n_tets), "added": len(added),
             "removed": len(removed),
             "removed_indices_a": sorted(inv_a[k] for k in removed)[:20],
             "added_indices_b": sorted(inv_b[k] for k in added)[:20]}, ka, kb)


def _face_adjacency(mesh, fkeys, tkeys):
    """face key -> the set of keys of the tetrahedra listing it."""
    adj = {}
    for f, (x, y) in zip(fkeys.tolist(), np.asarray(mesh.face_tets).tolist()):
        adj[f] = frozenset(tkeys[t] for t in (x, y) if t >= 0)
    return adj


def _face_diff(a, b, ida, idb, ka, kb):
    """(face differences, keys of a's and b's faces): a face is keyed by its
    sorted vertex positions, its adjacency is the set of tetrahedra listing it."""
    fa, fb, _ = _row_ids(_sorted_ids(ida, a, "face_vertices", 3),
                         _sorted_ids(idb, b, "face_vertices", 3))
    adj_a = _face_adjacency(a, fa, ka.tolist())
    adj_b = _face_adjacency(b, fb, kb.tolist())
    common = set(adj_a) & set(adj_b)
    return ({"a": int(a.n_faces), "b": int(b.n_faces),
             "added": len(set(adj_b) - set(adj_a)),
             "removed": len(set(adj_a) - set(adj_b)),
             "adjacency_changed": sum(1 for f in common if adj_a[f] != adj_b[f]),
             "boundary_a": sum(1 for f in adj_a.values() if len(f) == 1),
             "boundary_b": sum(1 for f in adj_b.values() if len(f) == 1)}, fa, fb)


def _portals(mesh, tkeys, fkeys):
    """(tet key, {face key i, face key j}) -> (cost, aux) of every portal cost."""
    pc = np.asarray(mesh.portal_costs)
    tf = np.asarray(mesh.tet_faces)
    res = {}
    for t in range(mesh.n_tets):
        for p, (i, j) in enumerate(PORTAL_PAIRS):
            res[(tkeys[t], frozenset((fkeys[tf[t, i]], fkeys[tf[t, j]])))] = \
                (float(pc[t, p, 0]), float(pc[t, p, 1]))
    return res


def _portal_diff(a, b, ka, kb, fa, fb):
    """Portal costs, keyed by (tet key, face key i, face key j)."""
    pa = _portals(a, ka.tolist(), fa.tolist())
    pb = _portals(b, kb.tolist(), fb.tolist())
    pcommon = set(pa) & set(pb)
    changed = [k for k in pcommon if pa[k] != pb[k]]
    return {"compared": len(pcommon), "changed": len(changed),
            "max_change": max((max(abs(pa[k][0] - pb[k][0]), abs(pa[k][1] - pb[k][1]))
                               for k in changed), default=0.0)}


def _cell_diff(a, b, ka, kb):
    """Grid cells compared as sets of tetrahedron keys (same dims only)."""
    if tuple(a.dims) != tuple(b.dims):
        return {"compared": 0, "changed": 0, "note": "grid dims differ; cells not compared"}
    ia, xa = a.grid_csr
    ib, xb = b.grid_csr
    kal, kbl = np.asarray(ka), np.asarray(kb)
    n_changed, examples = 0, []
    for c in range(len(ia) - 1):
        s1 = set(kal[xa[ia[c]:ia[c + 1]]].tolist())
        s2 = set(kbl[xb[ib[c]:ib[c + 1]]].tolist())
        if s1 != s2:
            n_changed += 1
            if len(examples) < 20:
                examples.append(c)
    return {"compared": len(ia) - 1, "changed": n_changed, "changed_cells": examples}


def format_text(d: dict, name_a="A", name_b="B") -> str:
    """A human-readable summary of :func:`diff`'s result."""
    lines = []
    if d["same"]:
        lines.append(f"{name_a} and {name_b}: same mesh")
    else:
        lines.append(f"{name_a} -> {name_b}: differ in " + ", ".join(d["changes"]))
    for k, v in d["header"].items():
        lines.append(f"  header {k}: {v['a']} -> {v['b']}")
    for k, v in d["encoding"].items():
        lines.append(f"  encoding {k}: {v['a']} -> {v['b']} (not a mesh difference)")
    v = d["vertices"]
    lines.append(f"  vertices: {v['a']} -> {v['b']}, {v['added']} new positions, "
                 f"{v['removed']} gone" + (f", {v['moved']} moved (max {v['max_move']:.6g}, "
                                           f"mean {v['mean_move']:.6g})" if "moved" in v else ""))
    t = d["tets"]
    lines.append(f"  tets: {t['a']} -> {t['b']}, {t['added']} added, {t['removed']} removed")
    f = d["faces"]
    lines.append(f"  faces: {f['a']} -> {f['b']}, {f['added']} added, {f['removed']} removed, "
                 f"{f['adjacency_changed']} with changed adjacency; boundary "
                 f"{f['boundary_a']} -> {f['boundary_b']}")
    p = d["portal_costs"]
    if p["compared"] or not (t["a"] and t["b"]):
        lines.append(f"  portal costs: {p['changed']} of {p['compared']} changed"
                     + (f" (max {p['max_change']:.6g})" if p["changed"] else ""))
    else:
        lines.append("  portal costs: not compared (no tetrahedron in common)")
    c = d["cells"]
    lines.append(f"  cells: {c['changed']} of {c['compared']} lists changed"
                 + (f" ({c['note']})" if "note" in c else ""))
    for side, name in (("a", name_a), ("b", name_b)):
        comp = d["components"][side]
        pockets = comp["pockets"]
        lines.append(f"  {name}: {comp['count']} connected component(s)"
                     + (f"; {len(pockets)} unreachable pocket(s) of "
                        + ", ".join(str(q["tets"]) for q in pockets[:10]) + " tets"
                        if pockets else ""))
    return "\n".join(lines)
