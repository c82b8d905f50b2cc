"""The boundary's pinches are quality information, read from [seed] fields
only (issue 28, point 4): a mesh with known pinches reports exactly them,
in any slot order another tool may write; they never fail verify; regn's
own builder makes none; and every query answers the same on the mesh
another tool wrote."""

from __future__ import annotations

import json

import numpy as np
import pytest

import regn
from regn.cli import main
from conftest import H, random_map
from regn.tolerances import SMOOTH_RTOL
from geometry_reference import pinches_reference
from other_tool import CONVENTION_CHECKS, as_other_tool

PINCH_CHECKS = ("boundary_no_pinch_edges", "boundary_no_pinch_vertices")
S = 4000.0            # metres: the size of one hand-made tetrahedron


def _edge_pinch(at):
    """Two tetrahedra meeting only along the edge (0, 1), in opposite
    quadrants around it: 6 vertices, 2 tetrahedra."""
    v = np.array([[0, 0, 0], [0, 0, 1], [1, 0, .5], [0, 1, .5], [-1, 0, .5], [0, -1, .5]])
    return S * v + at, np.array([[0, 1, 2, 3], [0, 1, 4, 5]])


def _vertex_pinch(at):
    """Two tetrahedra meeting only at vertex 0, in opposite octants: 7
    vertices, 2 tetrahedra."""
    e = np.eye(3)
    return S * np.vstack([np.zeros(3), e, -e]) + at, np.array([[0, 1, 2, 3], [0, 4, 5, 6]])


def _closed_cube(at):
    """A cube cut into six tetrahedra around its diagonal (0 -> 7): a
    closed boundary, 8 vertices."""
    corners = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)])
    tets = np.array([[0, 1, 3, 7], [0, 3, 2, 7], [0, 2, 6, 7], [0, 6, 4, 7],
                     [0, 4, 5, 7], [0, 5, 1, 7]])
    return S * corners + at, tets


def hand_made(k_edges, m_vertices):
    """A mesh with exactly ``k_edges`` pinch edges and ``m_vertices`` pinch
    vertices (and a closed cube), each group 15 km from the next; -> (mesh,
    the pinch edges as vertex pairs, the pinch vertices)."""
    groups = [_edge_pinch] * k_edges + [_vertex_pinch] * m_vertices + [_closed_cube]
    verts, tets, edges, points = [], [], [], []
    n = 0
    for i, make in enumerate(groups):
        at = np.array([-4.5e4 + 1.5e4 * (i % 6), -4e4 + 1.5e4 * (i // 6), 0.0])
        v, t = make(at)
        if make is _edge_pinch:
            edges.append([n, n + 1])
        elif make is _vertex_pinch:
            points.append(n)
        verts.append(v)
        tets.append(t + n)
        n += len(v)
    mesh = regn.build(np.vstack(verts), np.vstack(tets), bbox=((-H,) * 3, (H,) * 3),
                      dims=(5, 5, 5))
    return mesh, np.array(edges, np.int64).reshape(-1, 2), np.array(points, np.int64)


def _named(check, what):
    """The items a check's detail names (up to the first five)."""
    import re
    return re.findall(rf"{what} (\[\d+, \d+\]|\d+)", check.detail)


@pytest.mark.parametrize("k,m", [(0, 0), (1, 0), (0, 1), (2, 3), (5, 4)])
def test_a_hand_made_mesh_reports_exactly_its_pinches(k, m):
    mesh, edges, points = hand_made(k, m)
    report = regn.verify(mesh, strict=True)
    assert report.ok                                   # pinches never fail, even strict
    q = report.quality
    assert (q["pinch edges"].count, q["pinch vertices"].count) == (k, m)
    # an edge pinch has 11 edges, a vertex pinch 12, the cube's surface 18
    # (its 12 edges and a diagonal on each side)
    assert q["pinch edges"].total == 11 * k + 12 * m + 18
    assert q["pinch vertices"].total == 6 * k + 7 * m + 8
    for name in PINCH_CHECKS:
        c = report[name]
        assert c.kind == "info" and c.status == "info"
    c = report["boundary_no_pinch_edges"]
    assert c.total - c.passed == k
    assert _named(c, "edge") == [str(e) for e in edges.tolist()[:5]]
    c = report["boundary_no_pinch_vertices"]
    assert c.total - c.passed == m
    assert _named(c, "vertex") == [str(v) for v in points.tolist()[:5]]
    if not k and not m:
        assert "no pinch edge" in report["boundary_no_pinch_edges"].detail


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_same_pinches_whatever_slot_order_another_tool_writes(seed):
    mesh, edges, points = hand_made(2, 3)
    other = as_other_tool(mesh, seed)
    report = regn.verify(other.mesh, strict=True)
    q = report.quality
    assert (q["pinch edges"].count, q["pinch vertices"].count) == (2, 3)
    named = {tuple(sorted(map(int, e.strip("[]").split(", "))))
             for e in _named(report["boundary_no_pinch_edges"], "edge")}
    assert named == {tuple(sorted(e)) for e in other.vertex[edges].tolist()}
    assert {int(v) for v in _named(report["boundary_no_pinch_vertices"], "vertex")} \
        == set(other.vertex[points].tolist())
    # the other tool orients its own way: only those two conventions differ
    assert {c.name for c in report.failed} <= CONVENTION_CHECKS


@pytest.fixture(scope="module")
def pinched():
    """A Delaunay map with holes punched at random: pinched in many places."""
    return random_map(250, seed=7, hole_fraction=0.15)


@pytest.mark.parametrize("seed,orient", [(1, False), (2, True), (3, True)])
def test_verify_answers_the_same_on_another_tools_mesh(pinched, seed, orient):
    """Every check that is not about a convention the other tool breaks gives
    the same status and counts; strict verify the same verdict when the
    conventions are kept; the pinches are those the plain reference counts
    from the vertex indices alone."""
    other = as_other_tool(pinched, seed, orient=orient)
    mine, theirs = regn.verify(pinched, strict=True), regn.verify(other.mesh, strict=True)
    for a, b in zip(mine.checks, theirs.checks):
        assert a.name == b.name and a.kind == b.kind
        if a.name not in CONVENTION_CHECKS:
            assert (a.status, a.passed, a.total) == (b.status, b.passed, b.total), a.name
    assert mine.quality == theirs.quality
    edges, vertices = pinches_reference(other.mesh.tets)
    assert theirs.quality["pinch edges"].count == len(edges) > 0
    assert theirs.quality["pinch vertices"].count == len(vertices) > 0
    if not orient:
        assert mine.ok and theirs.ok
    else:
        assert {c.name for c in theirs.failed} == CONVENTION_CHECKS


def test_the_queries_answer_the_same_on_another_tools_mesh(pinched):
    """locate (both methods), paths (status and cost, bit for bit), rays,
    sight, wall distances, cost fields and components: the same answers,
    up to the other tool's numbering."""
    other = as_other_tool(pinched, 4)
    m, o, new_tet = pinched, other.mesh, other.tet
    rng = np.random.default_rng(5)
    pts = rng.uniform(-0.98 * H, 0.98 * H, (3000, 3))

    def renamed(t):
        t = np.asarray(t)
        return np.where(t >= 0, new_tet[np.maximum(t, 0)], -1)
    for method in ("auto", "grid"):
        np.testing.assert_array_equal(renamed(m.locate(pts, method=method)),
                                      o.locate(pts, method=method))
    inside = pts[m.locate(pts) >= 0]
    starts, goals = inside[:80], inside[80:160]
    mine, theirs = m.find_paths(starts, goals), o.find_paths(starts, goals)
    np.testing.assert_array_equal(mine.status, theirs.status)
    np.testing.assert_array_equal(mine.cost, theirs.cost)
    # the smoothed length is a solver's answer: the same within its tolerance
    # (the portals' corners come in another order)
    np.testing.assert_allclose(mine.length, theirs.length, rtol=SMOOTH_RTOL)
    assert np.count_nonzero(mine.found) > 40
    mine, theirs = m.raycast_many(starts, goals), o.raycast_many(starts, goals)
    np.testing.assert_array_equal(mine.status, theirs.status)
    np.testing.assert_allclose(mine.t, theirs.t, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(m.line_of_sight(starts, goals),
                                  o.line_of_sight(starts, goals))
    np.testing.assert_allclose(m.distance_to_wall(pts), o.distance_to_wall(pts),
                               rtol=1e-12, atol=1e-6)
    mine, theirs = m.find_paths(starts, goals, smooth=False), o.find_paths(starts, goals,
                                                                          smooth=False)
    np.testing.assert_array_equal(mine.points, theirs.points)
    mine, theirs = m.cost_field(goals[0]), o.cost_field(goals[0])
    np.testing.assert_array_equal(np.asarray(theirs.cost)[new_tet], mine.cost)
    # the nearest wall point; which face is named at an edge two walls share
    # goes by face number, so the faces and normals are not compared
    mine, theirs = m.nearest_wall(pts), o.nearest_wall(pts)
    np.testing.assert_allclose(mine.distances, theirs.distances, rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose(mine.points, theirs.points, rtol=1e-12, atol=1e-6)
    np.testing.assert_allclose(m.nearest(pts).points, o.nearest(pts).points, atol=1e-6)
    assert _outward_triangles(m) == _outward_triangles(o)
    # components: the same partition of the tetrahedra
    a, b = m.components(), o.components()[new_tet]
    assert len(np.unique(np.stack([a, b], axis=1), axis=0)) == len(np.unique(a)) \
        == len(np.unique(b))


def _outward_triangles(mesh):
    """The boundary surface as a set of triangles of corner positions, each
    starting at its smallest corner (so its orientation is kept)."""
    v, t = mesh.boundary_surface()
    out = set()
    for tri in np.asarray(v)[np.asarray(t)].tolist():
        k = tri.index(min(tri))
        out.add(tuple(map(tuple, tri[k:] + tri[:k])))
    return out


def test_radius_paths_answer_the_same_on_another_tools_mesh(pinched):
    """A portal's witness does not depend on the order its tetrahedron lists
    its vertices: the same mesh written by another tool gives the same
    sphere paths."""
    other = as_other_tool(pinched, 4, orient=False)
    rng = np.random.default_rng(5)
    pts = rng.uniform(-0.98 * H, 0.98 * H, (3000, 3))
    inside = pts[pinched.locate(pts) >= 0]
    starts, goals = inside[:80], inside[80:160]
    mine = pinched.find_paths(starts, goals, radius=1500.0)
    theirs = other.mesh.find_paths(starts, goals, radius=1500.0)
    np.testing.assert_array_equal(mine.status, theirs.status)
    np.testing.assert_allclose(mine.cost, theirs.cost, rtol=1e-9)


def test_pinches_are_read_from_the_face_planes_not_the_slots(pinched):
    """verify's pinches are those of the boundary faces as the queries see
    them (mesh.face_vertices), on the builder's slot order and on another."""
    from regn.geometry.manifold import triangle_pinches
    for mesh in (pinched, as_other_tool(pinched, 6).mesh):
        found = triangle_pinches(np.asarray(mesh.face_vertices)[mesh.boundary_faces])
        q = regn.verify(mesh).quality
        assert (q["pinch edges"].count, q["pinch vertices"].count) \
            == (len(found.edges), len(found.vertices))


# --- regn's builder makes none ---------------------------------------------------------

def test_generate_makes_no_pinch(demo_map):
    report = regn.verify(demo_map, strict=True)
    assert report.ok
    assert {q.count for q in report.quality.values()} == {0}
    assert report.quality["pinch edges"].total > 1000


def test_regn_build_makes_no_pinch(tmp_path, capsys):
    out = tmp_path / "field.rgn"
    assert main(["build", "--asteroids", "30", "--seed", "3", "--coverage-samples", "0",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", "--strict", str(out)]) == 0
    text = capsys.readouterr().out
    assert "quality (measured, never required): 0 pinch edges (of " in text
    assert ", 0 pinch vertices (of " in text


# --- what the user sees ---------------------------------------------------------------

def test_verify_shows_the_pinches_as_quality_and_passes(tmp_path, capsys):
    mesh, _, _ = hand_made(2, 3)
    path = tmp_path / "pinched.rgn"
    regn.save(mesh, path)
    assert main(["verify", "--strict", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"{path}: ok" in text
    assert ("quality (measured, never required): 2 pinch edges (of 76 boundary edges), "
            "3 pinch vertices (of 41 boundary vertices)") in text
    row = next(line for line in text.splitlines() if "boundary_no_pinch_edges" in line)
    assert row.split()[1:4] == ["info", "info", "74/76"]
    # the JSON report keeps its schema: the same keys, the pinch rows as info
    assert main(["verify", "--json", "--strict", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)["files"][0]
    assert set(report) == {"path", "ok", "byte_order", "pof0_dialect",
                           "roundtrip_identical", "checks"}
    rows = {c["name"]: c for c in report["checks"]}
    assert rows["boundary_no_pinch_edges"] == {
        "name": "boundary_no_pinch_edges", "kind": "info", "status": "info", "passed": 74,
        "total": 76, "detail": rows["boundary_no_pinch_edges"]["detail"]}
    assert rows["boundary_no_pinch_vertices"]["passed"] == 38
