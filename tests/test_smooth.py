"""Corridor smoothing (regn.query.paths.smooth) against a generic solver and by construction."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial import Delaunay

import regn
from regn.query.paths.smooth import smooth_polyline
from regn.tolerances import SMOOTH_RTOL


def length(p):
    return float(np.linalg.norm(np.diff(p, axis=0), axis=1).sum())


def centroid_length(s, g, tri):
    return length(np.vstack([s, tri.mean(axis=1), g]))


def slsqp(s, g, tri, starts):
    """Best SLSQP optimum over the barycentric parameterisation."""
    k = len(tri)
    P0, E = tri[:, 0], np.stack([tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]], axis=2)

    def fg(z):
        x = P0 + np.einsum("kdc,kc->kd", E, z.reshape(k, 2))
        d = np.diff(np.vstack([s, x, g]), axis=0)
        r = np.linalg.norm(d, axis=1)
        u = d / np.maximum(r, 1e-300)[:, None]
        gx = u[:-1] - u[1:]
        return r.sum(), np.einsum("kdc,kd->kc", E, gx).ravel()
    A = np.vstack([np.eye(2 * k), -np.kron(np.eye(k), [1.0, 1.0])])
    b = np.concatenate([np.zeros(2 * k), np.ones(k)])
    cons = [{"type": "ineq", "fun": lambda z: A @ z + b, "jac": lambda z: A}]
    return min(minimize(fg, z0, jac=True, method="SLSQP", constraints=cons,
                        options={"ftol": 1e-10, "maxiter": 300}).fun for z0 in starts)


def assert_inside(x, tri, rtol=1e-9):
    """Each x[i] lies in the closed triangle tri[i] (degenerate ones too)."""
    for p, T in zip(x, tri):
        scale = max(np.abs(T).max(), np.abs(p).max(), 1.0)
        E = np.stack([T[1] - T[0], T[2] - T[0]], axis=1)
        # non-degenerate: least-squares barycentrics, residual and signs
        if np.linalg.matrix_rank(E, tol=1e-12 * scale) == 2:
            uv, *_ = np.linalg.lstsq(E, p - T[0], rcond=None)
            assert np.linalg.norm(E @ uv - (p - T[0])) <= rtol * scale
            assert uv.min() >= -rtol and uv.sum() <= 1 + rtol
        else:
            # degenerate: the point is on one of the three edges
            d = []
            for a, b in ((T[0], T[1]), (T[1], T[2]), (T[2], T[0])):
                e = b - a
                t = np.clip(np.dot(p - a, e) / max(np.dot(e, e), 1e-300), 0, 1)
                d.append(np.linalg.norm(a + t * e - p))
            assert min(d) <= rtol * scale


@pytest.fixture(scope="module")
def corridors():
    rng = np.random.default_rng(7)
    pts = np.vstack([[[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                     rng.uniform(-1, 1, (300, 3))])
    m = regn.build(pts, Delaunay(pts).simplices)
    V, FV = np.asarray(m.vertices), np.asarray(m.face_vertices)
    out = []
    for a, b in zip(m.random_points(60, seed=1), m.random_points(60, seed=2)):
        p = m.find_path(a, b, smooth=False)
        if p.found and len(p.portals):
            out.append((a, b, V[FV[p.portals]]))
    assert len(out) >= 30
    return out


def test_mesh_corridors_match_slsqp(corridors):
    rng = np.random.default_rng(0)
    done = 0
    for s, g, tri in corridors:
        k = len(tri)
        if k > 16:                       # SLSQP gets slow; the rest is checked below
            continue
        mine = length(smooth_polyline(s, g, tri))
        starts = [np.full(2 * k, 1 / 3) + rng.uniform(-.1, .1, 2 * k)]
        best = slsqp(s, g, tri, starts)
        assert mine <= best * (1 + 1e-3)
        assert mine >= best * (1 - 1e-3)
        done += 1
        if done == 8:
            break
    assert done >= 6


def test_mesh_corridors_feasible_and_short(corridors):
    for s, g, tri in corridors:
        p = smooth_polyline(s, g, tri)
        assert p.shape == (len(tri) + 2, 3) and np.isfinite(p).all()
        assert np.array_equal(p[0], s) and np.array_equal(p[-1], g)
        assert_inside(p[1:-1], tri)
        assert length(p) <= centroid_length(s, g, tri)
        assert length(p) >= np.linalg.norm(g - s) * (1 - 1e-12)
        # a tighter tolerance only ever helps, and barely moves the length
        tight = length(smooth_polyline(s, g, tri, rtol=1e-9))
        assert tight <= length(p) * (1 + 1e-9) and length(p) <= tight * (1 + SMOOTH_RTOL)


def test_scale_and_translation_invariant(corridors):
    s, g, tri = max(corridors, key=lambda c: len(c[2]))
    off = np.array([3e4, -4e4, 1e4])
    a = smooth_polyline(s, g, tri)
    b = smooth_polyline(5e4 * s + off, 5e4 * g + off, 5e4 * tri + off)
    assert length(b) == pytest.approx(5e4 * length(a), rel=2 * SMOOTH_RTOL)
    assert_inside(b[1:-1], 5e4 * tri + off)


def test_straight_corridor():
    rng = np.random.default_rng(3)
    s, g = np.array([0.0, 0, 0]), np.array([10.0, 3, -2])
    k = 40
    t = np.sort(rng.uniform(0.02, 0.98, k))
    on = s + t[:, None] * (g - s)
    # triangles around points of the segment, randomly oriented, each
    # containing the segment point in its interior
    tri = on[:, None] + rng.normal(size=(k, 3, 3)) * 0.3
    bc = rng.dirichlet([2, 2, 2], k)
    tri += (on - np.einsum("kv,kvd->kd", bc, tri))[:, None]
    p = smooth_polyline(s, g, tri)
    assert length(p) == pytest.approx(np.linalg.norm(g - s), rel=SMOOTH_RTOL)
    d = np.cross(p - s, (g - s) / np.linalg.norm(g - s))
    assert np.abs(d).max() <= 1e-3 * np.linalg.norm(g - s)
    assert_inside(p[1:-1], tri)


def test_k0_and_k1():
    s, g = np.array([0.0, 0, 0]), np.array([2.0, 0, 0])
    p = smooth_polyline(s, g, np.zeros((0, 3, 3)))
    assert p.shape == (2, 3) and np.array_equal(p, [s, g])
    # pierced by the segment: the straight line
    T = np.array([[[1.0, -1, -1], [1, 2, -1], [1, -1, 2]]])
    p = smooth_polyline(s, g, T)
    assert length(p) == pytest.approx(2.0, rel=SMOOTH_RTOL)
    # off to the side: bends over the nearest edge, closed form by symmetry
    T = np.array([[[1.0, 1, -1], [1, 1, 1], [1, 3, 0]]])
    p = smooth_polyline(s, g, T)
    assert length(p) == pytest.approx(2 * np.sqrt(2), rel=SMOOTH_RTOL)
    assert np.allclose(p[1], [1, 1, 0], atol=1e-4)
    # random single triangles against SLSQP
    rng = np.random.default_rng(4)
    for _ in range(10):
        T = rng.normal(size=(1, 3, 3))
        a, b = rng.normal(size=3) * 3, rng.normal(size=3) * 3
        mine = length(smooth_polyline(a, b, T))
        best = slsqp(a, b, T, [np.array([0.3, 0.3]), np.array([0.1, 0.8]), np.array([0.8, 0.1])])
        assert mine == pytest.approx(best, rel=1e-4)


def test_degenerate_triangles():
    rng = np.random.default_rng(5)
    for trial in range(6):
        k = 12
        tri = rng.normal(size=(k, 3, 3)) + np.arange(1, k + 1)[:, None, None] * np.array([2.0, 0, 0])
        tri[2, 2] = tri[2, 1]                                   # repeated point
        tri[4, :] = tri[4, 0]                                   # all three equal
        tri[6, 2] = 0.3 * tri[6, 0] + 0.7 * tri[6, 1]           # collinear
        tri[7, 1] = tri[7, 2] = tri[7, 0] + [0, 0, 1e-12]       # sliver
        if trial % 2:
            tri[8] = tri[7]                                      # repeated triangle
        s, g = np.array([0.0, 0, 0]), np.array([2.0 * (k + 1), 1, -1])
        p = smooth_polyline(s, g, tri)
        assert np.isfinite(p).all()
        assert_inside(p[1:-1], tri)
        assert length(p) <= centroid_length(s, g, tri)
        z0 = np.full(2 * k, 1 / 3)
        best = slsqp(s, g, tri, [z0, z0 + rng.uniform(-.1, .1, 2 * k)])
        assert length(p) <= best * (1 + 1e-3)
    # everything in one point / start on the goal: no crash, finite
    T = np.zeros((3, 3, 3))
    p = smooth_polyline(np.zeros(3), np.zeros(3), T)
    assert np.isfinite(p).all() and length(p) == 0
    T = rng.normal(size=(3, 3, 3))
    p = smooth_polyline(np.ones(3), np.ones(3), T)
    assert np.isfinite(p).all() and length(p) <= centroid_length(np.ones(3), np.ones(3), T)


def test_nonfinite_input_does_not_crash():
    T = np.ones((2, 3, 3))
    T[1, 1, 1] = np.nan
    p = smooth_polyline(np.zeros(3), np.ones(3) * 3, T)
    assert p.shape == (4, 3)
    p = smooth_polyline(np.zeros(3), [np.inf, 0, 0], np.ones((2, 3, 3)))
    assert p.shape == (4, 3)
