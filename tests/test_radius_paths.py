"""Paths for agents with a radius (issue 16): every path keeps its radius
from every wall (checked segment by segment against every wall triangle
by the plain numpy distances of clearance_reference.py), a larger radius
never pays less, a gap refuses the spheres too big for it with the right
status, and radius 0 answers exactly as before issue 16 did.
"""

import hashlib
import itertools

import numpy as np
import pytest

import regn
from regn.cli import main
from regn.errors import QueryError
from regn.query.paths.smooth import smooth_polyline

from clearance_reference import points_clearance, segments_clearance, walls
from conftest import random_map


@pytest.fixture(scope="module")
def demo(demo_map):
    return demo_map


@pytest.fixture(scope="module")
def holes(holes_map):
    return holes_map


def _queries(mesh, n, seed):
    return list(zip(mesh.random_points(n, seed=seed), mesh.random_points(n, seed=seed + 1)))


RADII = {"demo": (150.0, 600.0, 2000.0), "holes": (400.0, 1500.0, 4000.0)}


@pytest.mark.parametrize("name", ["demo", "holes"])
def test_every_path_keeps_its_radius(name, request):
    mesh = request.getfixturevalue(name)
    tri = walls(mesh)
    pairs = _queries(mesh, 150, seed=3)
    for r in RADII[name]:
        a_seg, b_seg, found, starts, goals, statuses = [], [], 0, [], [], []
        for a, b in pairs:
            for smooth in (True, False):
                p = mesh.find_path(a, b, radius=r, smooth=smooth)
                statuses.append(p.status)
                if p.found:
                    found += smooth
                    a_seg.append(p.points[:-1])
                    b_seg.append(p.points[1:])
            starts.append(a)
            goals.append(b)
        assert found >= 0.5 * len(pairs), (r, found)
        # no wall within r of any point of any segment (exact, every wall)
        d = segments_clearance(np.vstack(a_seg), np.vstack(b_seg), tri, below=r)
        assert np.all(d >= r), (r, d.min())
        # an end with less room than r is refused by its own status
        ds = points_clearance(np.array(starts), tri, below=r)
        dg = points_clearance(np.array(goals), tri, below=r)
        st = np.array(statuses)[::2]
        assert np.all((st == "start_too_close") == (ds < r))
        assert np.all((st == "goal_too_close") == ((dg < r) & (ds >= r)))


@pytest.mark.parametrize("name", ["demo", "holes"])
def test_a_larger_radius_never_pays_less(name, request):
    mesh = request.getfixturevalue(name)
    radii = (0.0,) + RADII[name]
    for a, b in _queries(mesh, 120, seed=7):
        paths = [mesh.find_path(a, b, radius=r, smooth=False) for r in radii]
        for small, big in itertools.pairwise(paths):
            if big.found:
                assert small.found and small.cost <= big.cost * (1 + 1e-12)


def _slab_with_a_hole(hole=2, h=5000.0, n=10):
    """A box of n^3 cubes (each split into six tetrahedra) cut in two by a
    one-cube-thick slab at x in [0, h/5], open only through a square hole
    of ``hole`` x ``hole`` cubes round the x axis: the hole's middle has
    clearance hole * h / n / 2 (1 km by default), no other way through."""
    g = np.linspace(-h, h, n + 1)
    idx = np.arange((n + 1) ** 3).reshape(n + 1, n + 1, n + 1)
    verts = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    tets = []
    lo, hi = n // 2 - hole // 2, n // 2 + (hole + 1) // 2
    for i, j, k in itertools.product(range(n), repeat=3):
        if i == n // 2 and not (lo <= j < hi and lo <= k < hi):
            continue                     # the slab, less the hole
        for perm in itertools.permutations(range(3)):
            c = np.array([i, j, k])
            path = [c.copy()]
            for axis in perm:
                c[axis] += 1
                path.append(c.copy())
            tets.append([idx[tuple(p)] for p in path])
    return regn.build(verts, np.array(tets), bbox=((-h,) * 3, (h,) * 3), dims=(4, 4, 4))


def test_a_gap_lets_small_spheres_through_and_refuses_large_ones():
    mesh = _slab_with_a_hole()           # the hole's middle: 1 km from the walls
    a, b = (-3000.0, 0.0, 0.0), (3000.0, 0.0, 0.0)
    for smooth in (True, False):
        small = mesh.find_path(a, b, radius=400.0, smooth=smooth)
        assert small.status == "ok"
        assert np.all(np.abs(_crossing(small.points, 500.0)[1:]) <= 1000.0 - 400.0)
        assert mesh.find_path(a, b, radius=1100.0, smooth=smooth).status == "too_narrow"
    assert mesh.find_path(a, b, smooth=False).status == "ok"
    assert mesh.find_path((-4800.0, 0, 0), b, radius=400.0).status == "start_too_close"
    assert mesh.find_path(a, (4700.0, 0, 0), radius=400.0).status == "goal_too_close"
    # a point agent goes round nothing: the slab is a wall everywhere else
    far = mesh.find_path((-3000.0, 4000.0, 4000.0), (3000.0, 4000.0, 4000.0), radius=400.0)
    assert far.found and np.all(np.abs(_crossing(far.points, 500.0)[1:]) <= 600.0)


def _crossing(points, x):
    """Where a polyline from x < 0 to x > 0 first reaches the plane at x."""
    j = int(np.flatnonzero(points[1:, 0] >= x)[0])
    p, q = points[j], points[j + 1]
    return p + (x - p[0]) / (q[0] - p[0]) * (q - p)


def test_no_route_at_all_is_unreachable_not_too_narrow():
    mesh = _slab_with_a_hole(hole=0)     # the slab closes the box
    a, b = (-3000.0, 0.0, 0.0), (3000.0, 0.0, 0.0)
    assert mesh.find_path(a, b).status == "unreachable"
    assert mesh.find_path(a, b, radius=100.0).status == "unreachable"


def test_radius_arguments(holes):
    a, b = holes.random_points(2, seed=1)
    for bad in (-1.0, float("nan"), float("inf"), "wide", None, [1.0, 2.0]):
        with pytest.raises(QueryError):
            holes.find_path(a, b, radius=bad)
        with pytest.raises(QueryError):
            holes.raycast(a, b, radius=bad)
        with pytest.raises(QueryError):
            holes.line_of_sight(a, b, radius=bad)
        with pytest.raises(QueryError):
            holes.raycast_many(a, b, radius=bad)
        with pytest.raises(QueryError):
            holes.nearest(a, radius=bad)
        with pytest.raises(QueryError):
            holes.random_points(3, radius=bad)
    assert holes.find_path((1e9, 0, 0), b, radius=10.0).status == "start_outside"
    with pytest.raises(QueryError, match="goal: x is nan"):
        holes.find_path(a, (np.nan, 0, 0), radius=10.0)
    excl = np.zeros(holes.n_tets, bool)
    excl[holes.locate(b[None])[0]] = True
    assert holes.find_path(a, b, radius=10.0, exclude=excl).status == "excluded"


# --- radius 0 is today's code path --------------------------------------

GOLDEN = "fixtures/radius0_golden.npz"


def golden_maps():
    """The maps the golden answers were recorded on."""
    from regn.builder.generate import demo_field, generate
    yield "delaunay", random_map(400, seed=7, hole_fraction=0.15, dims=(6, 6, 6))
    yield "field", generate(*demo_field(seed=3, n=12), dims=(6, 6, 6), coverage_samples=0)


def answers(mesh, smoothed_polyline, **radius):
    """(statuses, costs, digests) of 150 queries, the way the golden file
    was recorded before issue 16: a digest covers the unsmoothed path's
    corridor, portals and polyline and the smoothed path's corridor,
    portals and smoother's polyline (one waypoint per portal), which
    ``smoothed_polyline(mesh, a, b, path)`` gives."""
    A, B = mesh.random_points(150, seed=11), mesh.random_points(150, seed=12)
    st, cost, digest = [], [], []
    for a, b in zip(A, B):
        p = mesh.find_path(a, b, smooth=False)
        q = mesh.find_path(a, b, **radius)
        h = hashlib.sha256()
        for arr in (p.tets, p.portals, p.points, q.tets, q.portals,
                    smoothed_polyline(mesh, a, b, q)):
            h.update(np.ascontiguousarray(arr).tobytes())
        st.append(p.status + "/" + q.status)
        cost.append([p.cost, q.cost])
        digest.append(h.hexdigest()[:32])
    return np.array(st), np.array(cost), np.array(digest)


def _smoother_polyline(mesh, a, b, path):
    if not path.found or len(path.portals) == 0:
        return path.points
    tri = np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[path.portals]]
    return smooth_polyline(a, b, tri)


def test_radius_zero_answers_exactly_as_before(request):
    """Bit for bit: statuses, costs, corridors, portals, the unsmoothed
    polyline and the smoother's polyline of 300 queries on two maps, against
    the answers recorded with the code before issue 16 (``record`` below;
    recorded again with main's code when main's builder changed the field
    map).
    The path's ``points`` are that polyline reduced to its turning points
    (test_waypoints.py), which issue 16 changed on purpose. Costs are the
    same route's cost to one rounding (2.3e-16 relative): they were summed
    from where the two searches met, and are now summed along the route
    from s to g (so that the landmark bounds, which move the meeting, cannot
    change them)."""
    path = request.path.parent / GOLDEN
    golden = np.load(path)
    for name, mesh in golden_maps():
        st, cost, digest = answers(mesh, _smoother_polyline, radius=0.0)
        assert np.array_equal(st, golden[name + "_status"])
        assert np.array_equal(digest, golden[name + "_digest"])
        want = golden[name + "_cost"]
        assert np.array_equal(np.isfinite(cost), np.isfinite(want))
        ok = np.isfinite(want)
        np.testing.assert_allclose(cost[ok], want[ok], rtol=4.5e-16, atol=0)


def record(out):
    """Write the golden file with the regn that is imported (run it with the
    code before issue 16: the smoothed path's points were the smoother's
    polyline then)."""
    data = {}
    for name, mesh in golden_maps():
        data[name + "_status"], data[name + "_cost"], data[name + "_digest"] = answers(
            mesh, lambda mesh, a, b, path: path.points)
    np.savez_compressed(out, **data)


# --- the command line ----------------------------------------------------

def test_cli_radius(tmp_path, capsys):
    f = tmp_path / "slab.rgn"
    regn.save(_slab_with_a_hole(), str(f))
    a, b = ["-3000", "0", "0"], ["3000", "0", "0"]
    assert main(["path", str(f), *a, *b, "--radius", "400", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"status": "ok"' in out
    assert main(["path", str(f), *a, *b, "--radius", "1100"]) == 1
    assert capsys.readouterr().out.startswith("status too_narrow")
    assert main(["path", str(f), *a, *b, "--radius", "-5"]) == 2
    assert "radius" in capsys.readouterr().err
    # the sphere grazes the hole's rim: clear at 400 m, not at 1100 m
    assert main(["raycast", str(f), *a, *b, "--radius", "400"]) == 0
    assert main(["raycast", str(f), *a, *b, "--radius", "1100", "--json"]) == 1
    assert '"status": "hit"' in capsys.readouterr().out
    seg = tmp_path / "s.txt"
    seg.write_text("-3000 0 0 3000 0 0\n-3000 0 0 -3000 0 4500\n")
    assert main(["raycasts", str(f), "--segments", str(seg), "--radius", "1100"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == ["hit", "hit"]
    pts = tmp_path / "p.txt"
    pts.write_text("-4900 0 0\n")
    assert main(["nearest", str(f), "--points", str(pts), "--radius", "400", "--json"]) == 0
    assert '"tet": -1' not in capsys.readouterr().out


if __name__ == "__main__":
    import sys
    record(sys.argv[1])
