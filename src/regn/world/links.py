"""Links between neighbouring tiles, and the portal nodes of the path search.

Two tiles touching across a plane each have boundary faces on it; a face of
one is *linked* to a face of the other when they are the same triangle
(the same three float32 positions). Built with the same wall points
(:mod:`regn.world.faces`), the two walls are the same triangulation, so a
triangle is either on both sides, and linked, or on one side only (its
tetrahedron on the other side was cut away: inside an obstacle, or
cleaned off), and a wall.

Portal nodes: the linked faces of a link are binned on a
:data:`NODE_BINS` x :data:`NODE_BINS` grid over the shared rectangle; each
bin's node is the centroid of its face nearest the bin's mean centroid. A
tile's node costs are the costs of the cheapest flights between its nodes
inside it (one cost field a node).
"""

from __future__ import annotations

import numpy as np

#: Portal nodes per link: at most this many squared.
NODE_BINS = 3
#: A node's point inside a tile: this far from its face toward the face's
#: tetrahedron's centroid (of the distance), so it is inside that tetrahedron.
INSIDE = 1e-3


def wall_faces(mesh, axis, plane):
    """``(faces (n,), keys (n,9))``: the boundary faces of ``mesh`` lying on
    the plane ``x[axis] = plane``, and each one's three vertices sorted (a
    key equal for the same triangle in any mesh)."""
    bf = np.asarray(mesh.boundary_faces)
    fv = np.asarray(mesh.face_vertices)[bf]
    V = np.asarray(mesh.vertices)[fv]                       # (n,3,3)
    on = np.all(V[:, :, axis] == plane, axis=1)
    bf, V = bf[on], V[on]
    order = np.lexsort((V[:, :, 2], V[:, :, 1], V[:, :, 0]), axis=-1)
    V = np.take_along_axis(V, order[:, :, None], axis=1)
    return bf, V.reshape(-1, 9)


def link_faces(mesh_a, mesh_b, axis, plane):
    """(L,2) int64: face of ``mesh_a``, same face of ``mesh_b``, on the plane."""
    return match_walls(*wall_faces(mesh_a, axis, plane), *wall_faces(mesh_b, axis, plane))[0]


def match_walls(fa, ka, fb, kb):
    """``(pairs (L,2) int64, rows (L,))``: the faces ``fa`` (keys ``ka``, of
    :func:`wall_faces`) of one tile matched with ``fb`` (``kb``) of its
    neighbour, in the order of ``fa``, and each pair's row in ``fa``."""
    where = {row.tobytes(): f for f, row in zip(np.asarray(fb).tolist(), kb)}
    rows = [i for i, row in enumerate(ka) if row.tobytes() in where]
    pairs = [(int(fa[i]), where[ka[i].tobytes()]) for i in rows]
    return np.array(pairs, np.int64).reshape(-1, 2), np.array(rows, np.int64)


def key_areas(keys):
    """(n,) the areas of the triangles of :func:`wall_faces` keys (n,9)."""
    V = np.asarray(keys, np.float64).reshape(-1, 3, 3)
    return 0.5 * np.linalg.norm(np.cross(V[:, 1] - V[:, 0], V[:, 2] - V[:, 0]), axis=1)


def wall_record(mesh, axis, plane):
    """``(faces, keys, centroids)`` of ``mesh``'s faces on the plane: what
    :func:`match_walls` and :func:`portal_points` need of a tile (small: a
    build worker returns it with the tile)."""
    bf, keys = wall_faces(mesh, axis, plane)
    return bf, keys, np.asarray(mesh.face_centroids)[bf]


def wall_coverage(mesh_a, mesh_b, axis, plane, pairs):
    """(faces of a on the plane, of b, linked): how much of each wall is linked."""
    return (len(wall_faces(mesh_a, axis, plane)[0]), len(wall_faces(mesh_b, axis, plane)[0]),
            len(pairs))


def portal_nodes(mesh_a, pairs, axis, lo, hi):
    """``(rows (k,), points (k,3))``: the rows of ``pairs`` chosen as nodes
    and their points (face centroids), one per occupied bin of the shared
    rectangle ``lo``..``hi`` (the tiles' common extent on the other axes)."""
    if not len(pairs):
        return np.zeros(0, np.int64), np.zeros((0, 3))
    return portal_points(np.asarray(mesh_a.face_centroids)[pairs[:, 0]], axis, lo, hi)


def portal_points(cen, axis, lo, hi):
    """:func:`portal_nodes` from the centroids ``cen`` (L,3) of the linked
    faces of the first tile, in the links' order."""
    if not len(cen):
        return np.zeros(0, np.int64), np.zeros((0, 3))
    u, v = [k for k in range(3) if k != axis]
    bu = np.clip(((cen[:, u] - lo[u]) / (hi[u] - lo[u]) * NODE_BINS).astype(np.int64), 0,
                 NODE_BINS - 1)
    bv = np.clip(((cen[:, v] - lo[v]) / (hi[v] - lo[v]) * NODE_BINS).astype(np.int64), 0,
                 NODE_BINS - 1)
    rows = []
    for b in np.unique(bu * NODE_BINS + bv):
        members = np.flatnonzero(bu * NODE_BINS + bv == b)
        mean = cen[members].mean(axis=0)
        rows.append(members[np.argmin(((cen[members] - mean) ** 2).sum(axis=1))])
    rows = np.array(rows, np.int64)
    return rows, cen[rows]


def inside_point(mesh, face):
    """A point of ``face`` (a boundary face) moved a hair into its tetrahedron."""
    f = int(face)
    t = int(np.asarray(mesh.face_tets)[f, 0])
    c = np.asarray(mesh.face_centroids)[f]
    return c + INSIDE * (np.asarray(mesh.tet_points)[t].mean(axis=0) - c)


def node_costs(mesh, faces):
    """(k,k) cost of the cheapest flight inside ``mesh`` between the nodes on
    its ``faces`` (k,); inf where none."""
    k = len(faces)
    pts = np.array([inside_point(mesh, f) for f in faces]).reshape(-1, 3)
    out = np.full((k, k), np.inf)
    for i in range(k):
        field = mesh.cost_field(pts[i])
        if field.status == "ok":
            out[i] = field.cost_at(pts)
        out[i, i] = 0.0
    return np.minimum(out, out.T)
