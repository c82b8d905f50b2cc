"""Pinches and overlaps: regn.geometry's kernels judged by plain references,
and the builder's repair that removes every pinch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import Delaunay

from geometry_reference import interiors_overlap_depth, pinches_reference
from regn.builder.unpinch import unpinch
from regn.geometry.manifold import pinches, triangle_pinches
from regn.geometry.overlap import overlapping_tets
from regn.geometry.tets import signed_volumes


def _delaunay(n, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    pts = np.vstack([corners, rng.uniform(0, 1, (n, 3))]) * scale
    return pts, Delaunay(pts).simplices.astype(np.int64)


def _as_sets(found):
    return sorted(map(tuple, found.edges.tolist())), sorted(found.vertices.tolist())


# --------------------------------------------------------------------------- pinches

def test_two_tetrahedra_sharing_only_an_edge_pinch_it():
    # two tetrahedra on the edge (0,1), on opposite sides: 4 boundary triangles
    # meet at that edge
    tets = np.array([[0, 1, 2, 3], [0, 1, 4, 5]])
    found = pinches(tets)
    assert _as_sets(found) == ([(0, 1)], [])
    assert not found.closed and found.boundary_triangles == 8


def test_two_tetrahedra_sharing_only_a_vertex_pinch_it():
    found = pinches(np.array([[0, 1, 2, 3], [0, 4, 5, 6]]))
    assert _as_sets(found) == ([], [0])


def test_a_closed_ball_of_tetrahedra_has_no_pinch():
    _, tets = _delaunay(40, 0)
    found = pinches(tets)
    assert found.closed and found.boundary_triangles == 12       # the cube's walls


@pytest.mark.parametrize("seed", range(6))
def test_pinches_match_the_plain_reference_on_holed_meshes(seed):
    # random holes punched into a Delaunay mesh pinch its boundary in many places
    pts, tets = _delaunay(150, seed)
    keep = np.random.default_rng(seed).random(len(tets)) > 0.3
    tets = tets[keep]
    found = pinches(tets)
    edges, vertices = pinches_reference(tets)
    assert _as_sets(found) == (edges, vertices)
    assert len(edges) + len(vertices) > 0                 # the test exercises pinches


def test_triangle_pinches_take_triangles_in_any_order():
    tris = np.array([[2, 1, 0], [0, 3, 1], [1, 2, 3], [3, 2, 0]])   # a closed tetrahedron
    assert triangle_pinches(tris).closed
    assert _as_sets(triangle_pinches(tris[:3])) == ([(0, 2), (0, 3), (2, 3)], [])


@pytest.mark.parametrize("seed", range(4))
def test_unpinch_leaves_a_closed_boundary(seed):
    pts, tets = _delaunay(200, seed)
    holed = tets[np.random.default_rng(seed).random(len(tets)) > 0.15]
    fixed, dropped = unpinch(pts, holed)
    assert pinches(fixed).closed
    assert pinches_reference(fixed) == ([], [])
    assert dropped == len(holed) - len(fixed) > 0
    # only tetrahedra of the input, each at most once
    as_rows = {tuple(t) for t in holed.tolist()}
    assert len(as_rows) == len(holed) and all(tuple(t) in as_rows for t in fixed.tolist())


@pytest.mark.parametrize("seed", range(4))
def test_unpinch_drops_little_around_round_holes(seed):
    # holes as the builder makes them: every tetrahedron meeting a ball culled
    from regn.geometry.distance import tets_intersect_balls
    pts, tets = _delaunay(1500, seed)
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.1, 0.9, (8, 3))
    radii = rng.uniform(0.05, 0.15, 8)
    holed = tets[~tets_intersect_balls(pts[tets], centres, radii)]
    assert not pinches(holed).closed
    fixed, _ = unpinch(pts, holed)
    assert pinches(fixed).closed
    vol = np.abs(signed_volumes(pts[holed])).sum()
    assert np.abs(signed_volumes(pts[fixed])).sum() >= 0.97 * vol


# --------------------------------------------------------------------------- overlaps

def _random_pair(rng):
    """Two tetrahedra near each other, sometimes sharing a face, an edge or
    a vertex, sometimes touching face to face."""
    a = rng.normal(size=(4, 3))
    b = rng.normal(size=(4, 3)) + rng.normal(scale=0.7, size=3)
    kind = rng.integers(5)
    if kind == 1:                                 # a shared face, apexes apart
        b[:3] = a[:3]
        n = np.cross(a[1] - a[0], a[2] - a[0])
        side = np.sign(np.dot(a[3] - a[0], n))
        b[3] = a[:3].mean(axis=0) - side * n * rng.uniform(0.2, 1.0)
    elif kind == 2:                               # a shared edge
        b[:2] = a[:2]
    elif kind == 3:                               # a shared vertex
        b[0] = a[0]
    elif kind == 4:                               # a vertex on a face, the rest outside it
        n = np.cross(a[1] - a[0], a[2] - a[0])
        out = -np.sign(np.dot(a[3] - a[0], n)) * n / np.linalg.norm(n)
        b[0] = rng.dirichlet(np.ones(3)) @ a[:3]
        d = rng.normal(size=(3, 3)) * 0.5
        along = d @ out
        b[1:] = b[0] + d + np.outer(np.abs(along) - along, out)
    return a, b


def test_overlap_kernel_matches_the_linear_programme():
    rng = np.random.default_rng(7)
    pairs, verdicts = [], []
    while len(pairs) < 700:
        a, b = _random_pair(rng)
        if min(abs(signed_volumes(np.stack([a, b])))) < 1e-3:
            continue
        depth = interiors_overlap_depth(a, b)
        if 1e-6 <= depth < 1e-4:
            continue                               # too close to call either way
        pairs.append((a, b))
        verdicts.append(depth >= 1e-6)             # else touching or apart
    # every pair far from the others, all tested at once
    shift = 100.0 * np.arange(len(pairs))[:, None, None] * np.array([1.0, 0, 0])
    tp = np.concatenate([np.stack([a, b]) for a, b in pairs]).reshape(-1, 2, 4, 3)
    tp = (tp + shift[:, None]).reshape(-1, 4, 3)
    found = {tuple(p) for p in overlapping_tets(tp, tol=1e-9).pairs.tolist()}
    got = [(2 * k, 2 * k + 1) in found for k in range(len(pairs))]
    assert got == verdicts
    assert len(found) == sum(verdicts)             # no pair across the groups
    assert 100 < sum(verdicts) < 600


def test_a_delaunay_mesh_has_no_overlap_and_a_moved_copy_is_found():
    pts, tets = _delaunay(300, 3, scale=1e5)
    tp = pts[tets]
    clean = overlapping_tets(tp)
    assert len(clean.pairs) == 0 and clean.tested > len(tets)
    big = int(np.argmax(np.abs(signed_volumes(tp))))
    extra = tp[[big]] + 0.05 * np.ptp(tp[big], axis=0)   # a copy, moved a little
    found = overlapping_tets(np.concatenate([tp, extra]))
    near = np.flatnonzero(np.all((tp.min(axis=1) < extra[0].max(axis=0))
                                 & (tp.max(axis=1) > extra[0].min(axis=0)), axis=1))
    want = sorted((int(i), len(tp)) for i in near
                  if interiors_overlap_depth(tp[i] / 1e5, extra[0] / 1e5) > 1e-9)
    assert sorted(map(tuple, found.pairs.tolist())) == want and (big, len(tp)) in want


def test_non_finite_tetrahedra_are_left_out_of_the_overlap_test():
    pts, tets = _delaunay(30, 1)
    tp = pts[tets].copy()
    tp[0, 0, 0] = np.nan
    tp[1, 2, 1] = np.inf
    assert len(overlapping_tets(tp).pairs) == 0


def test_pinch_counts_say_how_many_edges_and_vertices_were_looked_at():
    found = pinches(np.array([[0, 1, 2, 3], [0, 1, 4, 5]]))
    assert (found.n_edges, found.n_vertices) == (11, 6)       # 6 + 6 edges, one shared
    closed = triangle_pinches(np.array([[2, 1, 0], [0, 3, 1], [1, 2, 3], [3, 2, 0]]))
    assert (closed.n_edges, closed.n_vertices) == (6, 4)


@pytest.mark.parametrize("seed", range(3))
def test_the_test_near_boundary_faces_finds_what_the_exhaustive_one_does(seed):
    # a holed Delaunay mesh, plus moved copies of some tetrahedra (new vertices)
    pts, tets = _delaunay(400, seed, scale=1e5)
    rng = np.random.default_rng(seed)
    tets = tets[rng.random(len(tets)) > 0.1]
    tets = np.where(signed_volumes(pts[tets])[:, None] < 0, tets[:, [0, 1, 3, 2]], tets)
    for k in rng.choice(len(tets), 6, replace=False):
        copy = pts[tets[k]] + rng.normal(size=3) * 0.3 * np.ptp(pts[tets[k]], axis=0)
        tets = np.vstack([tets, len(pts) + np.arange(4)])
        pts = np.vstack([pts, copy])
    tets = np.where(signed_volumes(pts[tets])[:, None] < 0, tets[:, [0, 1, 3, 2]], tets)
    tp = pts[tets]
    near = overlapping_tets(tp, tets)
    every = overlapping_tets(tp)
    assert near.tested < every.tested                      # the reduced test ran
    assert np.array_equal(near.pairs, every.pairs) and len(every.pairs) > 0


def test_a_fold_across_a_shared_face_is_found():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.5]], float)
    tets = np.array([[0, 1, 2, 3], [0, 1, 2, 4]])          # both apexes above the face
    assert overlapping_tets(pts[tets], tets).pairs.tolist() == [[0, 1]]
    below = pts.copy()
    below[4, 2] = -0.5
    assert len(overlapping_tets(below[tets], tets).pairs) == 0
