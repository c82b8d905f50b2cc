"""A level's map reaches its walls (regn.levels.snap): the boundary of the
free blocks' tetrahedra is moved out to the agent's clearance surface, and
no part of a tetrahedron (corner, edge or face) comes nearer the input's
triangles than the radius less the safety promise's tolerance. Distances
are judged by the plain numpy reference of clearance_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
from clearance_reference import segments_clearance

from regn.levels import Soup, generate_level

#: The safety promise's tolerance (metres).
TOL = 0.01
R = 1.0


def _quad(a, b, c, d):
    return [a, b, c, d]


def open_room(size=20.0, height=8.0, crate=True):
    """A floor, four walls (sheets) and a crate on the floor; no ceiling."""
    s, h = size, height
    quads = [_quad((0, 0, 0), (s, 0, 0), (s, s, 0), (0, s, 0)),
             _quad((0, 0, 0), (0, s, 0), (0, s, h), (0, 0, h)),
             _quad((s, 0, 0), (s, 0, h), (s, s, h), (s, s, 0)),
             _quad((0, 0, 0), (0, 0, h), (s, 0, h), (s, 0, 0)),
             _quad((0, s, 0), (s, s, 0), (s, s, h), (0, s, h))]
    if crate:
        lo, hi = np.array([8.0, 8.0, 0.0]), np.array([12.0, 11.0, 3.0])
        c = [[(hi if (k >> 2) & 1 else lo)[0], (hi if (k >> 1) & 1 else lo)[1],
              (hi if k & 1 else lo)[2]] for k in range(8)]
        quads += [[c[i] for i in q] for q in ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4),
                                              (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5))]
    verts = np.array([p for q in quads for p in q], float)
    tris = np.array([[4 * i, 4 * i + 1, 4 * i + 2] for i in range(len(quads))]
                    + [[4 * i, 4 * i + 2, 4 * i + 3] for i in range(len(quads))])
    return Soup(verts, tris, "open room")


BOX = ((-1.0, -1.0, -1.0), (21.0, 21.0, 8.0))


@pytest.fixture(scope="module")
def room_maps():
    room = open_room()
    # free blocks of 1.4 m and up: the blocks' corners stop well short of
    # the floor (as a big level's do, whose blocks the format's counts keep
    # coarse)
    kw = dict(agent_radius=R, max_voxels=48 ** 3, min_block=1.0, coverage_samples=20_000)
    return room, generate_level(BOX, room, **kw), generate_level(BOX, room, snap=False, **kw)


def test_a_point_just_over_the_floor_is_in_the_map(room_maps):
    _, snapped, plain = room_maps
    # the agent's centre can be R above the floor; a little above it is navigable
    xy = np.array([[3.0, 3.0], [5.0, 16.0], [16.0, 4.0], [15.0, 15.0]])
    p = np.column_stack([xy, np.full(len(xy), R + 0.1)])
    assert (snapped.locate(p) >= 0).all()
    assert (plain.locate(p) < 0).all()                       # the blocks' corners stop short
    # and near the walls: R + 0.1 from a wall, mid-height
    q = np.array([[R + 0.1, 10.0, 4.0], [20.0 - R - 0.1, 5.0, 4.0], [10.0, R + 0.1, 5.0]])
    assert (snapped.locate(q) >= 0).all()
    assert snapped.build_report["coverage"] > plain.build_report["coverage"]


def _edges(mesh):
    t = np.asarray(mesh.tets)
    e = np.unique(np.sort(t[:, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]].reshape(-1, 2),
                          axis=1), axis=0)
    return mesh.vertices.astype(np.float64)[e]


def test_no_corner_edge_or_face_comes_nearer_the_walls_than_the_radius(room_maps):
    room, snapped, _ = room_maps
    tri = room.verts[room.tris]
    v = snapped.vertices.astype(np.float64)
    assert segments_clearance(v, v, tri).min() >= R - TOL
    e = _edges(snapped)
    assert segments_clearance(e[:, 0], e[:, 1], tri, below=2 * R).min() >= R - TOL
    # a face cutting the crate's corner: the walls' edges against the map's faces
    faces = v[np.asarray(snapped.face_vertices)[np.asarray(snapped.boundary_faces)]]
    we = tri[:, [[0, 1], [1, 2], [2, 0]]].reshape(-1, 2, 3)
    assert segments_clearance(we[:, 0], we[:, 1], faces, below=2 * R).min() >= R - TOL
    rep = snapped.build_report
    assert rep["clearance_ok"] and rep["snapped_vertices"] > 0
    assert rep["clearance_least"] >= R - TOL


def test_the_snapped_map_passes_verify_strict(room_maps, tmp_path):
    from regn.cli import main
    _, snapped, _ = room_maps
    out = tmp_path / "room.rgn"
    out.write_bytes(snapped.dumps())
    assert main(["verify", str(out), "--strict"]) == 0


def test_the_check_counts_an_edge_cutting_a_convex_corner():
    """A tetrahedron whose corners are all 1 m from a box's corner but
    whose edge passes 0.6 m from it: the report's distance is the edge's."""
    from regn.levels.snap import Walls
    lo, hi = np.zeros(3), np.ones(3)
    c = [[(hi if (k >> 2) & 1 else lo)[0], (hi if (k >> 1) & 1 else lo)[1],
          (hi if k & 1 else lo)[2]] for k in range(8)]
    quads = ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5))
    tri = np.array([[c[q[0]], c[q[1]], c[q[2]]] for q in quads]
                   + [[c[q[0]], c[q[2]], c[q[3]]] for q in quads])
    walls = Walls(tri, np.zeros((0, 3)), np.zeros(0))
    # the box's corner (1,1,1); two corners 1 m off it along +x and +y, the
    # edge between them passes sqrt(0.5) m from it
    tp = np.array([[[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [2.0, 2.0, 1.5], [2.0, 2.0, 0.5]]])
    d = walls.tet_distances(tp, 2.0)[0]
    assert segments_clearance(tp[0, :1], tp[0, 1:2], tri)[0] == pytest.approx(np.sqrt(0.5))
    assert d == pytest.approx(np.sqrt(0.5))


def test_a_voxel_floor_is_reached_to_the_radius_not_to_whole_voxels():
    """2 m voxels and a 1 m radius: the voxel solid grows by a whole voxel
    (2 m); the snapped map comes down to 1 m over the floor's top, no
    nearer, and keeps clear of the pillar's voxels by the radius."""
    from regn.levels import voxels_from_array
    occ = np.zeros((12, 12, 8), bool)
    occ[:, :, 0] = True                                      # the floor: top at z = 2
    occ[5:7, 5:7, :6] = True                                 # a pillar
    vox = voxels_from_array(occ, 2.0, (0, 0, 0))
    box = ((0, 0, 0), (24, 24, 16))
    kw = dict(agent_radius=R, coverage_samples=10_000)
    snapped, plain = generate_level(box, vox, **kw), generate_level(box, vox, snap=False, **kw)
    p = np.array([[3.0, 3.0, 2 + R + 0.1], [20.0, 4.0, 2 + R + 0.1], [4.0, 20.0, 2 + R + 0.1]])
    assert (snapped.locate(p) >= 0).all() and (plain.locate(p) < 0).all()
    lo = np.argwhere(occ) * 2.0
    pts = snapped.vertices.astype(np.float64)
    gap = np.maximum(np.maximum(lo[None] - pts[:, None], pts[:, None] - (lo[None] + 2.0)), 0.0)
    assert np.linalg.norm(gap, axis=2).min() >= R - TOL     # every corner off every voxel
    assert snapped.build_report["clearance_ok"]


def _inside_tet(p, x):
    """(N,) bool: points p (N,3) in the closed tetrahedron x (4,3)."""
    faces = ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1))
    sides = []
    for k, (a, b, c) in enumerate(faces):
        n = np.cross(x[b] - x[a], x[c] - x[a])
        sides.append(np.sign((p - x[a]) @ n) * np.sign((x[k] - x[a]) @ n) >= 0)
    return np.all(sides, axis=0)


def _tet_faces(x):
    return np.array([[x[1], x[2], x[3]], [x[0], x[3], x[2]], [x[0], x[1], x[3]], [x[0], x[2], x[1]]])


def _reference_tet_distance(x, tri, centres, radii):
    """The distance from tetrahedron x (4,3) to the triangles and balls,
    plainly: zero when a triangle corner lies inside; else the least of its
    edges against the triangles and the triangles' edges against its faces
    (segments_clearance counts a crossing as zero)."""
    edges = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    best = np.inf
    if len(tri):
        if _inside_tet(tri.reshape(-1, 3), x).any():
            best = 0.0
        a = np.array([x[i] for i, _ in edges])
        b = np.array([x[j] for _, j in edges])
        best = min(best, segments_clearance(a, b, tri).min())
        ta = tri[:, [0, 1, 2]].reshape(-1, 3)
        tb = tri[:, [1, 2, 0]].reshape(-1, 3)
        best = min(best, segments_clearance(ta, tb, _tet_faces(x)).min())
    for c, r in zip(centres, radii):
        inside = _inside_tet(c[None], x)[0]
        d = 0.0 if inside else min(np.linalg.norm(c - x[0]),
                                   segments_clearance(c[None], c[None], _tet_faces(x))[0])
        best = min(best, max(d - r, 0.0))
    return best


def test_wall_distances_of_tetrahedra_and_points_match_a_plain_reference():
    """The snap's walls (a hierarchy of the triangles, and balls) against the
    plain numpy distances of clearance_reference.py, on a level of two
    scales: a crate-sized cluster of small triangles beside kilometre
    sheets, tetrahedra from half a metre to kilometres; a tetrahedron's
    distance is exact below the limit (the limit beyond), a point's
    nearest wall within the search (inf beyond)."""
    from regn.levels.snap import Walls
    rng = np.random.default_rng(7)
    small = rng.uniform(0, 10, (200, 1, 3)) + rng.normal(0, 0.5, (200, 3, 3))
    big = rng.uniform(-2000, 3000, (40, 1, 3)) + rng.normal(0, 600, (40, 3, 3))
    tri = np.concatenate([small, big])
    centres, radii = np.array([[40.0, 5, 5], [1500, -800, 200]]), np.array([3.0, 250.0])
    walls = Walls(tri, centres, radii)
    tets = []
    for size in (0.5, 5.0, 80.0, 1500.0):
        base = rng.uniform(-500 if size > 50 else -5, 2500 if size > 50 else 20, (10, 1, 3))
        tets.append(base + rng.normal(0, size, (10, 4, 3)))
    tp = np.concatenate(tets)
    for limit in (2.0, 60.0, 5000.0):
        got = walls.tet_distances(tp, limit)
        want = np.minimum([_reference_tet_distance(x, tri, centres, radii) for x in tp], limit)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        if limit == 60.0:                # both kinds of answer are judged
            assert (want < limit).any() and (want == limit).any()
    pts = np.concatenate([rng.uniform(-5, 15, (50, 3)), rng.uniform(-2000, 3000, (50, 3))])
    for search in (1.0, 100.0, 1e5):
        got = walls.nearest(pts, search)
        want = segments_clearance(pts, pts, tri)
        for c, r in zip(centres, radii):
            d = np.linalg.norm(pts - c, axis=1) - r
            want = np.where(d >= 0, np.minimum(want, d), want)
        want = np.where(want < search, want, np.inf)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert np.isfinite(walls.nearest(pts, 100.0)).any() and np.isinf(walls.nearest(pts, 1.0)).any()
