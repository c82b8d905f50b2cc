"""Pinches and overlaps: regn.geometry's kernels judged by plain references,
and the builder's repair that removes every pinch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import Delaunay

from geometry_reference import (interiors_overlap_depth, overlapping_pairs_reference,
                                pinches_reference)
from regn.builder.unpinch import unpinch
from regn.geometry.manifold import pinches, triangle_pinches
from regn.geometry.overlap import overlapping_tets
from regn.geometry import FACE_SLOTS
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


def _holed(n, seed, hole=0.1, scale=1e5, flip=0.0):
    """A Delaunay mesh with a fraction ``hole`` of its tetrahedra removed,
    a fraction ``flip`` of the rest listed the other way round."""
    pts, tets = _delaunay(n, seed, scale)
    rng = np.random.default_rng(seed)
    tets = tets[rng.random(len(tets)) > hole]
    flipped = rng.random(len(tets)) < flip
    tets[flipped] = tets[flipped][:, [0, 1, 3, 2]]
    return pts, tets


def _boundary(tets):
    """(B,2) tetrahedron, face slot of each face one tetrahedron lists."""
    from regn.geometry.tets import face_keys
    keys = face_keys(tets)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    once = first[counts == 1]
    return np.stack([once // 4, once % 4], axis=1)


def _check_against_every_pair(pts, tets, tol=None):
    """overlapping_tets against the exhaustive reference: every pair it
    reports overlaps, it reports some pair exactly when some pair
    overlaps; -> (found, every)."""
    tp = pts[tets]
    got = overlapping_tets(tp, tets, tol=tol)
    every = overlapping_pairs_reference(tp, got.tolerance)
    found = set(map(tuple, got.pairs.tolist()))
    assert got.decided
    assert found <= every, sorted(found - every)[:5]
    assert bool(found) == bool(every)
    return found, every


@pytest.mark.parametrize("seed", range(4))
def test_valid_holed_meshes_have_no_overlap_whatever_the_orientation(seed):
    pts, tets = _holed(250, seed, flip=0.3 * (seed % 2))
    found, every = _check_against_every_pair(pts, tets)
    assert found == every == set()


@pytest.mark.parametrize("seed", range(4))
def test_a_vertex_moved_across_a_boundary_face(seed):
    # a boundary vertex pushed through the boundary face nearest to it (of
    # a tetrahedron sharing no vertex with it), just inside that tetrahedron
    pts, tets = _holed(200, seed, hole=0.2)
    rng = np.random.default_rng(seed)
    bnd = _boundary(tets)
    on_boundary = np.unique(tets[bnd[:, 0][:, None], FACE_SLOTS[bnd[:, 1]]])
    v = int(rng.choice(on_boundary))
    star = np.unique(tets[np.any(tets == v, axis=1)])
    far = [i for i in range(len(bnd)) if not np.isin(tets[bnd[i, 0]], star).any()]
    tri = pts[tets[bnd[far, 0][:, None], FACE_SLOTS[bnd[far, 1]]]]
    i = far[int(np.argmin(np.linalg.norm(tri.mean(axis=1) - pts[v], axis=1)))]
    t = bnd[i, 0]
    moved = pts.copy()
    moved[v] = 0.7 * pts[tets[t, FACE_SLOTS[bnd[i, 1]]]].mean(axis=0) + 0.3 * pts[tets[t, bnd[i, 1]]]
    found, every = _check_against_every_pair(moved, tets)
    assert found and any(t in pair for pair in found)


@pytest.mark.parametrize("seed", range(3))
def test_a_duplicated_tetrahedron(seed):
    pts, tets = _holed(200, seed)
    k = int(np.random.default_rng(seed).integers(len(tets)))
    twice = np.vstack([tets, tets[[k]]])
    found, every = _check_against_every_pair(pts, twice)
    assert (k, len(tets)) in found
    # its vertices listed in another order: the same
    again = np.vstack([tets, tets[[k]][:, [1, 0, 3, 2]]])
    assert (k, len(tets)) in _check_against_every_pair(pts, again)[0]


@pytest.mark.parametrize("seed", range(4))
def test_a_tetrahedron_moved_into_the_meshed_space(seed):
    # a copy of one tetrahedron (new vertices) centred on another one far
    # away: every pair whose overlap reaches the copy's faces is found;
    # only tetrahedra wholly inside the copy may be missed
    pts, tets = _holed(250, seed)
    rng = np.random.default_rng(seed)
    a, b = rng.choice(len(tets), 2, replace=False)
    copy = pts[tets[a]] - pts[tets[a]].mean(axis=0) + pts[tets[b]].mean(axis=0)
    pts2 = np.vstack([pts, copy])
    tets2 = np.vstack([tets, len(pts) + np.arange(4)])
    found, every = _check_against_every_pair(pts2, tets2)
    c = len(tets)
    assert (min(b, c), max(b, c)) in found
    for i, j in every - found:
        assert c in (i, j)
        inner = pts2[tets2[i if j == c else j]]
        bary = np.linalg.solve(np.vstack([copy.T, np.ones(4)]), np.vstack([inner.T, np.ones(4)]))
        assert bary.min() > -1e-9          # wholly inside the copy


def test_tetrahedra_touching_a_boundary_face_from_outside_overlap_only_when_pushed_in():
    pts, tets = _delaunay(60, 5, scale=1e5)            # a cube, no holes
    bnd = _boundary(tets)
    t, k = bnd[0]
    face = pts[tets[t, FACE_SLOTS[k]]]
    normal = np.cross(face[1] - face[0], face[2] - face[0])
    normal /= np.linalg.norm(normal)
    if np.dot(pts[tets[t, k]] - face[0], normal) > 0:
        normal = -normal                                   # out of the mesh
    apex = face.mean(axis=0) + 2e4 * normal
    tol = overlapping_tets(pts[tets], tets).tolerance
    for push, overlaps in ((0.0, False), (0.4 * tol, False), (5 * tol, True), (5e3, True)):
        # a tetrahedron on the face from outside (its own vertices), pushed in
        outside = np.vstack([face, apex]) - push * normal
        pts2 = np.vstack([pts, outside])
        tets2 = np.vstack([tets, len(pts) + np.arange(4)])
        found, every = _check_against_every_pair(pts2, tets2)
        assert ((t, len(tets)) in found) == overlaps, push
        assert found == every


@pytest.mark.parametrize("seed", range(3))
def test_moved_copies_are_found_as_by_every_pair(seed):
    # a holed Delaunay mesh, plus moved copies of some tetrahedra (new vertices)
    pts, tets = _delaunay(250, seed, scale=1e5)
    rng = np.random.default_rng(seed)
    tets = tets[rng.random(len(tets)) > 0.1]
    for k in rng.choice(len(tets), 6, replace=False):
        copy = pts[tets[k]] + rng.normal(size=3) * 0.3 * np.ptp(pts[tets[k]], axis=0)
        tets = np.vstack([tets, len(pts) + np.arange(4)])
        pts = np.vstack([pts, copy])
    found, every = _check_against_every_pair(pts, tets)
    assert found == every and len(every) > 0


def test_a_fold_across_a_shared_face_is_found():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.5]], float)
    tets = np.array([[0, 1, 2, 3], [0, 1, 2, 4]])          # both apexes above the face
    assert overlapping_tets(pts[tets], tets).pairs.tolist() == [[0, 1]]
    below = pts.copy()
    below[4, 2] = -0.5
    assert len(overlapping_tets(below[tets], tets).pairs) == 0


def test_a_fan_winding_past_a_full_turn_around_an_edge_overlaps_itself():
    # seven tetrahedra on the edge a-b, 70 degrees each: the last overlaps
    # the first, though each shares its faces from opposite sides
    angles = np.radians(70.0 * np.arange(8))
    ring = np.stack([np.cos(angles), np.sin(angles), np.full(8, 0.5)], axis=1)
    pts = np.vstack([[0, 0, 0], [0, 0, 1], ring]) * 1e4
    tets = np.array([[0, 1, 2 + i, 3 + i] for i in range(7)])
    found, every = _check_against_every_pair(pts, tets)
    assert (0, 6) in found and found == every


def test_a_tetrahedron_inside_the_closed_star_of_its_vertex():
    # eight tetrahedra around vertex 0 fill a ball (its faces at 0 all
    # listed twice); a ninth at 0 lies inside them
    octa = np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)
    pts = np.vstack([[0, 0, 0], octa, [[0.3, 0.2, 0.25], [0.2, 0.35, 0.2], [0.25, 0.25, 0.4]]]) * 1e4
    ring = [1, 2, 3, 4]
    tets = [[0, ring[i], ring[(i + 1) % 4], pole] for i in range(4) for pole in (5, 6)]
    tets = np.array(tets + [[0, 7, 8, 9]])
    found, every = _check_against_every_pair(pts, tets)
    assert found and all(8 in pair for pair in found) and found == every


# --------------------------------------------------------------------------- valid maps, budget

def test_the_demo_field_and_the_disc_sized_map_have_no_overlap():
    import sys
    from pathlib import Path

    from regn.builder.generate import demo_field
    from regn.builder.world import tetrahedralize_free_space
    (lo, hi), obstacles = demo_field()
    v, t, _ = tetrahedralize_free_space(lo, hi, obstacles, seed=1)
    demo = overlapping_tets(v[t], t)
    assert demo.decided and len(demo.pairs) == 0 and demo.tested > len(t)
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    try:
        from bench_format import disc_sized_map
    finally:
        sys.path.pop(0)
    disc = disc_sized_map()
    found = overlapping_tets(disc.tet_points, disc.tets, threads=2)
    assert found.decided and len(found.pairs) == 0 and found.tested > disc.n_tets


def test_past_its_work_budget_the_test_is_undecided(monkeypatch):
    import regn.geometry.overlap as ov
    pts, tets = _holed(300, 0, hole=0.2)
    assert overlapping_tets(pts[tets], tets).decided
    monkeypatch.setattr(ov, "WORK_PER_TET", 0)
    monkeypatch.setattr(ov, "WORK_BASE", 100)
    assert not overlapping_tets(pts[tets], tets).decided


def test_hostile_inputs_cost_a_bounded_number_of_tests():
    # a face listed by 3 000 tetrahedra from one side: 4.5 M pairs overlap
    n = 3000
    rng = np.random.default_rng(0)
    apex = np.column_stack([rng.uniform(0.1, 0.3, n), rng.uniform(0.1, 0.3, n),
                            rng.uniform(0.5, 1.0, n)])
    pts = np.vstack([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], apex]) * 1e4
    tets = np.column_stack([np.zeros(n, int), np.ones(n, int), np.full(n, 2), 3 + np.arange(n)])
    got = overlapping_tets(pts[tets], tets)
    assert not got.decided and 0 < len(got.pairs) and got.tested < n * (n - 1) // 2 // 4
    # 3 000 long, thin, parallel tetrahedra on one diagonal, all boxes meeting,
    # none overlapping: 72 M pairs of faces whose boxes meet
    base = np.array([[0, 0, 0], [1, 1, 1], [0.004, -0.004, 0.0], [0.5, 0.5, 0.51]]) * 1e5
    offset = np.arange(n)[:, None, None] * np.array([0.02, -0.02, 0.0]) * 1e5 / 2
    needles = base[None] + offset
    got = overlapping_tets(needles, np.arange(4 * n).reshape(n, 4))
    assert not got.decided and len(got.pairs) == 0


def test_the_builder_refuses_tetrahedra_it_cannot_decide(monkeypatch):
    import regn
    import regn.geometry.overlap as ov
    from regn.errors import BuildError
    pts, tets = _holed(120, 3, hole=0.0, scale=1e4)
    regn.build(pts, tets)
    monkeypatch.setattr(ov, "WORK_PER_TET", 0)
    monkeypatch.setattr(ov, "WORK_BASE", 10)
    with pytest.raises(BuildError, match="could not be decided"):
        regn.build(pts, tets)
