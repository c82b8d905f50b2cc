"""Tetrahedralise the free space of a box around obstacles.

Sample points — the 8 box corners, points on the box faces and edges (jittered
only within their face/edge, so the walls stay exactly planar), a jittered
interior lattice kept away from the obstacles, a shell of points just outside
each inflated sphere (two for a triangle-mesh obstacle) and rings where a
sphere crosses a wall — take their Delaunay tetrahedralisation (scipy/qhull),
then drop every tetrahedron that meets an inflated obstacle (exact test, on
the float32 positions the file will store) and every near-degenerate one,
peel flat tetrahedra off the surface, drop the fewest tetrahedra that make the
boundary a closed 2-manifold (:mod:`.unpinch`) and the specks left apart.
What is left never touches an inflated obstacle; its coverage of the true
free volume is measured by Monte Carlo.

``detail`` scales the number of sample points (about linearly): the lattice
and the shells are denser or sparser, down to :data:`MIN_SHELL_POINTS` a
sphere. :class:`LimitError` means the sample alone is past the format's
vertex limit; the finished counts are for the caller to fit.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.spatial import Delaunay, cKDTree

from ..errors import BuildError, LimitError
from ..format.layout import U16_MAX
from ..geometry.graph import tet_components
from ..geometry.sampling import fibonacci_sphere
from ..geometry.tets import (degenerate_threshold, edge_lengths, face_keys,
                             locate_in_tets, signed_volumes, used_vertices)
from ..tolerances import DEGENERATE_REL, SAMPLE_MERGE_REL
from .obstacles import Sphere, TriangleMesh, obstacles_contain, tets_intersect_obstacles
from .unpinch import unpinch


def _inflate(obstacles, r):
    return [ob.inflated(r) for ob in obstacles]


def _sphere_shell(ob, offset, n):
    """A Fibonacci shell of ``n`` points at ``(1 + offset)`` times the radius
    of a (already inflated) sphere."""
    return np.asarray(ob.centre, np.float64) + ob.radius * (1 + offset) * fibonacci_sphere(n)


#: Interior lattice cells per axis (for a cube) at detail 1.
BASE_LATTICE = 10
#: Shell point spacing as a fraction of the inflated radius at detail 1.
BASE_SHELL_FRAC = 0.7
#: Points on a sphere's shell, at least and at most.
MIN_SHELL_POINTS = 12
MAX_SHELL_POINTS = 4000
#: Surface tetrahedra flatter than this quality are peeled off ...
SLIVER_QUALITY = 0.02
#: ... as long as the volume removed stays below this fraction of the mesh's.
SLIVER_BUDGET = 0.005
#: Connected pieces smaller than this fraction of the largest piece's volume are
#: dropped (isolated slivers left in the creases between touching obstacles).
SPECK_REL = 1e-4
#: The error when every tetrahedron meets an obstacle (a world's tile inside
#: rock is then a REGN without tetrahedra).
NO_FREE_SPACE = "no free space left: every tetrahedron meets an obstacle"
#: Coverage samples: drawn and located this many at a time, and at most.
COVERAGE_CHUNK = 1_000_000
MAX_COVERAGE_SAMPLES = 100_000_000


def _f32_inward(lo, hi):
    lo = np.asarray(lo, np.float64).reshape(3)
    hi = np.asarray(hi, np.float64).reshape(3)
    lo32 = lo.astype(np.float32)
    hi32 = hi.astype(np.float32)
    lo32 = np.where(lo32.astype(np.float64) < lo, np.nextafter(lo32, np.float32(np.inf)), lo32)
    hi32 = np.where(hi32.astype(np.float64) > hi, np.nextafter(hi32, np.float32(-np.inf)), hi32)
    return lo32.astype(np.float64), hi32.astype(np.float64)


def _box_points(lo, hi, n, rng, jitter=0.3):
    """Lattice points of ``n`` (3,) cells per axis: boundary ones jittered in
    their face/edge only, interior ones jittered freely."""
    axes = [np.linspace(lo[k], hi[k], n[k] + 1) for k in range(3)]
    I, J, K = np.meshgrid(*[np.arange(m + 1) for m in n], indexing="ij")
    idx = np.stack([I.ravel(), J.ravel(), K.ravel()], axis=1)
    pts = np.stack([axes[k][idx[:, k]] for k in range(3)], axis=1)
    h = (hi - lo) / np.asarray(n)
    on = (idx == 0) | (idx == np.asarray(n))           # (N,3): pinned coordinate
    jit = rng.uniform(-jitter, jitter, size=pts.shape) * h
    jit[on] = 0.0
    pts = pts + jit
    boundary = on.any(axis=1)
    return pts[boundary], pts[~boundary], h


def _sphere_plan(R, spacing):
    """``(n, offset, spacing)``: the point count of a sphere's shell for a
    point spacing of about ``spacing`` (at least :data:`MIN_SHELL_POINTS`),
    the shell's offset relative to the radius ``R``, and the spacing the
    ``n`` points give. The shell sits beyond the sagitta of its Delaunay
    chord triangles, so the tetrahedra on them stay clear of the sphere."""
    n = int(np.clip(np.ceil(4 * np.pi * R * R / (spacing * spacing) * 1.1),
                    MIN_SHELL_POINTS, MAX_SHELL_POINTS))
    s = float(np.sqrt(4 * np.pi * 1.1 / n))         # radii between neighbours
    return n, shell_offset(n), s * R


#: The deepest chord of the hull of ``n`` Fibonacci points on the unit
#: sphere is at ``1 - (SAGITTA_S2 + SAGITTA_N / n) s^2`` from the centre,
#: ``s^2 = 4.4 pi / n`` (fitted to the hulls of n = 12 .. 4000 within 1 %;
#: tests/test_builder_shell.py checks every n); the shell's offset is that
#: times SHELL_MARGIN plus SHELL_FLOOR (float32 rounding of the positions).
SAGITTA_S2 = 0.269
SAGITTA_N = 1.1
SHELL_MARGIN = 1.1
SHELL_FLOOR = 2e-4


def shell_offset(n):
    """The offset (of the radius) of a shell of ``n`` Fibonacci points: its
    hull's chords clear the sphere by about a tenth of their depth."""
    s2 = 4 * np.pi * 1.1 / n
    return SHELL_MARGIN * (SAGITTA_S2 + SAGITTA_N / n) * s2 + SHELL_FLOOR


def _wall_rings(ob, R, spacing, lo, hi, offset):
    """Points on the box walls (and edges) just outside an inflated sphere that
    crosses them, at ``(1 + offset) R`` from its centre: the 2-D (and 1-D)
    analogue of the shell, so the walls are sampled where the sphere meets
    them."""
    c = np.array(ob.centre)
    out = []
    Rs = R * (1 + offset)
    for ax in range(3):
        for wall in (lo[ax], hi[ax]):
            d = abs(wall - c[ax])
            if d >= Rs:
                continue
            rc = np.sqrt(Rs * Rs - d * d)
            n = int(np.clip(np.ceil(2 * np.pi * rc / spacing * 1.2), 6, 2000))
            th = 2 * np.pi * np.arange(n) / n
            u, v = [k for k in range(3) if k != ax]
            p = np.empty((n, 3))
            p[:, ax] = wall
            p[:, u] = c[u] + rc * np.cos(th)
            p[:, v] = c[v] + rc * np.sin(th)
            out.append(p)
            out.extend(_ring_on_edges(c, rc, ax, wall, u, v, lo))
            out.extend(_ring_on_edges(c, rc, ax, wall, u, v, hi))
    if not out:
        return np.zeros((0, 3))
    p = np.vstack(out)
    return p[np.all((p >= lo) & (p <= hi), axis=1)]


def _ring_on_edges(c, rc, ax, wall, u, v, corner):
    """Where a ring of radius ``rc`` about ``c`` in the wall ``x[ax] = wall``
    crosses the box edges of that wall through ``corner``: (1,3) points."""
    out = []
    for u2, v2 in ((u, v), (v, u)):
        d2 = rc * rc - (corner[u2] - c[u2]) ** 2
        if d2 <= 0:
            continue
        for sgn in (-1, 1):
            q = np.empty(3)
            q[ax], q[u2] = wall, corner[u2]
            q[v2] = c[v2] + sgn * np.sqrt(d2)
            out.append(q[None])
    return out


def _obstacle_scale(ob):
    if isinstance(ob, Sphere):
        return ob.radius
    lo, hi = ob.bounds()
    return 0.25 * float(np.linalg.norm(hi - lo))


def _tet_quality(tp):
    """6*sqrt(2)*volume / longest edge^3: 1 for a regular tetrahedron, 0 when flat."""
    vol = np.abs(signed_volumes(tp))
    e = edge_lengths(tp).max(axis=1)
    return 6 * np.sqrt(2) * vol / np.maximum(e, 1e-300) ** 3, vol


def _boundary_tets(tets):
    _, inv, cnt = np.unique(face_keys(tets), return_inverse=True, return_counts=True)
    return (cnt[inv.ravel()] == 1).reshape(-1, 4).any(axis=1)


def _peel_slivers(pts, tets, q_min=SLIVER_QUALITY, budget_rel=SLIVER_BUDGET, passes=3):
    """Drop flat tetrahedra on the mesh surface (quality < ``q_min``), worst
    first, while the volume removed stays under ``budget_rel`` of the total
    (so coverage drops by at most that much). Interior slivers stay: removing
    them would punch holes."""
    q, vol = _tet_quality(pts[tets])
    budget = budget_rel * vol.sum()
    keep = np.ones(len(tets), dtype=bool)
    spent = 0.0
    for _ in range(passes):
        cand = np.flatnonzero(keep & (q < q_min))
        if not len(cand):
            break
        on = np.zeros(len(tets), dtype=bool)
        on[np.flatnonzero(keep)[_boundary_tets(tets[keep])]] = True
        cand = cand[on[cand]]
        if not len(cand):
            break
        cand = cand[np.argsort(q[cand], kind="stable")]
        room = np.cumsum(vol[cand]) <= budget - spent
        cand = cand[room]
        if not len(cand):
            break
        keep[cand] = False
        spent += vol[cand].sum()
    return tets[keep], int((~keep).sum())


def closed(pts, tets):
    """``(tets, pinching dropped, in specks dropped)``: a closed boundary
    (:func:`.unpinch.unpinch`), then no specks (:func:`drop_specks`)."""
    tets, n_pinch = unpinch(pts, tets)
    tets, n_specks = drop_specks(pts, tets)
    return tets, n_pinch, n_specks


def drop_specks(pts, tets, rel=SPECK_REL):
    """``(tets, dropped)``: pieces under ``rel`` of the largest's volume
    removed (the largest always kept)."""
    n, lab = tet_components(tets)
    if n <= 1:
        return tets, 0
    vol = np.abs(signed_volumes(pts[tets]))
    cv = np.bincount(lab, weights=vol, minlength=n)
    keep = cv[lab] >= rel * cv.max()
    if not keep.any():
        keep = lab == np.argmax(cv)
    return tets[keep], int((~keep).sum())


def _checked(bbox_min, bbox_max, obstacles, agent_radius, detail):
    obstacles = list(obstacles or ())
    r = float(agent_radius)
    detail = float(detail)
    if not (np.isfinite(detail) and detail > 0):
        raise BuildError(f"detail must be > 0, got {detail}")
    if not (np.isfinite(r) and r >= 0):
        raise BuildError(f"agent_radius (--agent-radius) must be >= 0, got {r}")
    lo, hi = _f32_inward(bbox_min, bbox_max)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi <= lo):
        raise BuildError(f"box must be finite with max > min, got {lo} .. {hi}")
    return obstacles, r, detail, lo, hi


def lattice_spacing(ext, detail):
    """(3,) the interior lattice's cell at ``detail`` in a box of extent
    ``ext`` (what caps the shells' spacing), whatever its point count."""
    cells = BASE_LATTICE * float(detail) ** (1 / 3)
    ext = np.asarray(ext, np.float64)
    return ext / np.maximum(1.0, np.round(ext / (ext.max() / cells)))


def _lattice_cells(ext, detail):
    """(3,) interior lattice cells per axis at ``detail``; LimitError (before
    anything is allocated) when their points alone pass the vertex limit."""
    cells = BASE_LATTICE * detail ** (1 / 3)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        n = np.maximum(1.0, np.round(ext / (ext.max() / cells)))
        est = float(np.prod(n + 1))
    if not est <= U16_MAX:
        raise LimitError(f"the free-space sample needs about {est:.4g} vertices, more than "
                         f"the format's u16 limit of {U16_MAX}", what="vertices",
                         count=int(min(est, 2 ** 62)))
    return n.astype(np.int64)


def _obstacle_samples(obstacles, detail, ext, h, lo, hi, rng):
    """``(points, snap, keep_out)``: the shells (and wall rings) around each
    inflated obstacle, how close to a wall each point snaps onto it (a
    quarter of its obstacle's spacing), and how far from each obstacle the
    lattice keeps away."""
    frac = BASE_SHELL_FRAC / np.sqrt(detail)
    shells, snap, keep_out = [], [], []
    for ob in obstacles:
        R = _obstacle_scale(ob)
        spacing = min(max(frac * R, 1e-6 * ext.max()), h.min())
        if isinstance(ob, Sphere):
            n_shell, offset, spacing = _sphere_plan(R, spacing)
            shells += [_sphere_shell(ob, offset, n_shell),
                       _wall_rings(ob, R, spacing, lo, hi, offset)]
            keep_out.append(offset * R + 0.5 * min(spacing * 2, h.min()))
        else:
            shells += [ob.shell(spacing, rng)[0],
                       ob.inflated(0.5 * spacing).shell(spacing, rng)[0]]
            keep_out.append(0.5 * spacing + 0.5 * min(spacing * 2, h.min()))
        snap.append(np.full(len(shells[-2]) + len(shells[-1]), 0.25 * spacing))
    if not shells:
        return np.zeros((0, 3)), np.zeros(0), keep_out
    return np.vstack(shells), np.concatenate(snap), keep_out


def _given_boundary(boundary, lo, hi):
    """The caller's box-boundary sample as (M,3) float64, checked: float32-exact
    points on the box's walls, its 8 corners among them."""
    b = np.asarray(boundary, np.float64).reshape(-1, 3)
    on = np.isclose(b, lo, rtol=0, atol=0) | np.isclose(b, hi, rtol=0, atol=0)
    if not (np.isfinite(b).all() and on.any(axis=1).all()
            and np.all((b >= lo) & (b <= hi))):
        raise BuildError("boundary points must lie on the box's walls")
    if np.count_nonzero(on.all(axis=1)) < 8:
        raise BuildError("boundary points must include the box's 8 corners")
    if np.any(b.astype(np.float32).astype(np.float64) != b):
        raise BuildError("boundary points must be float32-exact")
    return b


def free_space_samples(bbox_min, bbox_max, obstacles=(), *, agent_radius=0.0, detail=1.0,
                       seed=0, boundary=None, lattice_detail=None):
    """(N,3) float32-exact points that :func:`tetrahedralize_free_space` triangulates:
    box corners, wall points, the interior lattice, and the obstacle shells.

    ``boundary``, if given, is the whole sample of the box's walls ((M,3)
    float32-exact points on them, the 8 corners included, already clear of
    the obstacles): it replaces the corners, wall lattice and wall rings,
    comes first and is never merged away, and shell points near a wall are
    dropped instead of snapped onto it. A tiled world gives each pair of
    neighbouring tiles the same points on their shared wall, so the two
    triangulations of that wall are the same (:mod:`regn.world.faces`).

    ``lattice_detail``, if given, sets the interior lattice's density
    instead of ``detail`` (at most ``detail``); the shells keep ``detail``
    (their spacing capped by ``detail``'s lattice cell, as without it)."""
    obstacles, r, detail, lo, hi = _checked(bbox_min, bbox_max, obstacles, agent_radius, detail)
    ext = hi - lo
    rng = np.random.default_rng(seed)
    lattice = detail if lattice_detail is None else min(float(lattice_detail), detail)
    bpts, ipts, h = _box_points(lo, hi, _lattice_cells(ext, lattice), rng)
    if lattice != detail:
        h = lattice_spacing(ext, detail)
    obstacles = _inflate(obstacles, r)          # from here on, tests use distance 0
    if boundary is not None:
        return _samples_in_given_boundary(_given_boundary(boundary, lo, hi), ipts, obstacles,
                                          detail, ext, h, lo, hi, rng)
    sp, snap, keep_out = _obstacle_samples(obstacles, detail, ext, h, lo, hi, rng)
    total = len(sp) + len(bpts) + len(ipts)
    if total > 4 * U16_MAX:
        raise LimitError(f"the free-space sample needs about {total} vertices, more than the "
                         f"format's u16 limit of {U16_MAX}", what="vertices", count=total)
    # interior lattice points away from every obstacle's shells
    keep = np.ones(len(ipts), dtype=bool)
    for ob, gap in zip(obstacles, keep_out):
        keep &= ~ob.near(ipts, gap)
    ipts = ipts[keep]
    # boundary points not inside an inflated obstacle
    bpts = bpts[~obstacles_contain(obstacles, bpts)]
    # shell points: snap those near a wall onto it, drop those outside or inside others
    if len(sp):
        sp = np.where(np.abs(sp - lo) <= snap[:, None], lo, sp)
        sp = np.where(np.abs(sp - hi) <= snap[:, None], hi, sp)
        sp = sp[np.all((sp >= lo) & (sp <= hi), axis=1)]
        sp = sp[~obstacles_contain(obstacles, sp)]
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    pts = np.vstack([corners, bpts, ipts, sp])
    pts = np.clip(pts.astype(np.float32).astype(np.float64), lo, hi)
    # merge near-duplicates (keep the first: corners, walls, lattice, shells)
    pairs = cKDTree(pts).query_pairs(SAMPLE_MERGE_REL * float(np.linalg.norm(ext)),
                                     output_type="ndarray")
    if len(pairs):
        drop = np.zeros(len(pts), dtype=bool)
        drop[np.maximum(pairs[:, 0], pairs[:, 1])] = True
        drop[:8] = False
        pts = pts[~drop]
    return pts


def _samples_in_given_boundary(bpts, ipts, obstacles, detail, ext, h, lo, hi, rng):
    """:func:`free_space_samples` with the walls' sample given: the interior
    lattice and the obstacle shells strictly inside the box, behind ``bpts``."""
    sp, snap, keep_out = _obstacle_samples(obstacles, detail, ext, h, lo, hi, rng)
    keep = np.ones(len(ipts), dtype=bool)
    for ob, gap in zip(obstacles, keep_out):
        keep &= ~ob.near(ipts, gap)
    ipts = ipts[keep]
    if len(sp):
        inside = np.all((sp - lo > snap[:, None]) & (hi - sp > snap[:, None]), axis=1)
        sp = sp[inside]
        sp = sp[~obstacles_contain(obstacles, sp)]
    inner = np.vstack([ipts, sp])
    inner = inner.astype(np.float32).astype(np.float64)
    inner = inner[np.all((inner > lo) & (inner < hi), axis=1)]
    total = len(bpts) + len(inner)
    if total > 4 * U16_MAX:
        raise LimitError(f"the free-space sample needs about {total} vertices, more than the "
                         f"format's u16 limit of {U16_MAX}", what="vertices", count=total)
    pts = np.vstack([bpts, inner])
    pairs = cKDTree(pts).query_pairs(SAMPLE_MERGE_REL * float(np.linalg.norm(ext)),
                                     output_type="ndarray")
    if len(pairs):
        drop = np.zeros(len(pts), dtype=bool)
        drop[np.maximum(pairs[:, 0], pairs[:, 1])] = True
        drop[:len(bpts)] = False
        pts = pts[~drop]
    return pts


def tetrahedralize_free_space(bbox_min, bbox_max, obstacles=(), *, agent_radius=0.0,
                              detail=1.0, seed=0, boundary=None, lattice_detail=None):
    """Tetrahedra filling the box minus the obstacles inflated by ``agent_radius``.

    Returns ``(vertices (V,3) float64 — float32-exact, tets (T,4) int64, report)``.
    ``report`` is a dict of counts and seconds per stage. Raises
    :class:`LimitError` when the sample alone needs more than 65 535
    vertices (the other counts are the caller's to fit: see
    :func:`regn.generate`), :class:`BuildError` when no free space is left.
    ``lattice_detail``: see :func:`free_space_samples`.
    """
    t0 = time.perf_counter()
    times = {}
    obstacles, r, detail, lo, hi = _checked(bbox_min, bbox_max, obstacles, agent_radius, detail)
    ext = hi - lo
    pts = free_space_samples(lo, hi, obstacles, agent_radius=r, detail=detail, seed=seed,
                             boundary=boundary, lattice_detail=lattice_detail)
    times["sample"] = time.perf_counter() - t0
    if len(pts) > U16_MAX:
        raise LimitError(f"the free-space sample needs {len(pts)} vertices, more than the "
                         f"format's u16 limit of {U16_MAX}", what="vertices", count=len(pts))

    # --- Delaunay ---------------------------------------------------------------
    t1 = time.perf_counter()
    dl = Delaunay(pts)
    simp = dl.simplices.astype(np.int64)
    times["delaunay"] = time.perf_counter() - t1

    # --- drop what meets an obstacle, and degenerate tets ---------------------
    t2 = time.perf_counter()
    tp = pts[simp]
    hit = tets_intersect_obstacles(tp, _inflate(obstacles, r)) if obstacles else \
        np.zeros(len(tp), dtype=bool)
    times["clearance_cull"] = time.perf_counter() - t2
    vol = np.abs(signed_volumes(tp))
    thr = np.maximum(10 * degenerate_threshold(tp), DEGENERATE_REL * float(np.prod(ext)))
    degen = (vol <= thr) & ~hit
    kept = ~hit & ~degen
    tets = simp[kept]
    t3 = time.perf_counter()
    tets, n_slivers = _peel_slivers(pts, tets)
    tets, n_pinch, n_small = closed(pts, tets)
    verts, tets = used_vertices(pts, tets)
    times["cleanup"] = time.perf_counter() - t3
    times["total"] = time.perf_counter() - t0
    report = {
        "sample_points": int(len(pts)), "delaunay_tets": int(len(simp)),
        "dropped_obstacle": int(hit.sum()), "dropped_degenerate": int(degen.sum()),
        "dropped_slivers": int(n_slivers), "dropped_pinching": int(n_pinch),
        "dropped_specks": int(n_small),
        "vertices": int(len(verts)), "tets": int(len(tets)),
        "obstacles": len(obstacles), "agent_radius": r, "detail": detail, "seed": int(seed),
        "lattice_detail": detail if lattice_detail is None else min(float(lattice_detail),
                                                                    detail),
        "bbox": [lo.tolist(), hi.tolist()], "seconds": times,
    }
    if not len(tets):
        raise BuildError(NO_FREE_SPACE)
    return verts, tets, report


def free_volume_coverage(vertices, tets, bbox_min, bbox_max, obstacles=(),
                         agent_radius=0.0, samples=200_000, seed=0, locate=None):
    """Monte Carlo fraction of the free volume (box minus inflated obstacles)
    covered by the tetrahedra. Returns a dict: ``coverage``, ``free_fraction``
    (free volume / box volume), ``samples``, ``in_obstacle_hits`` (samples
    located in a tet yet inside an inflated obstacle — 0 when clearance holds).
    The samples are drawn and located :data:`COVERAGE_CHUNK` at a time, so
    memory does not grow with their number (at most
    :data:`MAX_COVERAGE_SAMPLES`). ``locate(points)``, if given, finds the
    tetrahedron holding each point (-1 for none) — a built mesh's
    :meth:`regn.Mesh.locate` is far faster than the search among bare
    tetrahedra used otherwise.
    """
    samples = _checked_samples(samples)
    lo = np.asarray(bbox_min, np.float64).reshape(3)
    hi = np.asarray(bbox_max, np.float64).reshape(3)
    rng = np.random.default_rng(seed)
    n_free = n_covered = n_hits = 0
    for start in range(0, samples, COVERAGE_CHUNK):
        p = rng.uniform(lo, hi, size=(min(COVERAGE_CHUNK, samples - start), 3))
        blocked = obstacles_contain(list(obstacles), p, float(agent_radius))
        n_free += int((~blocked).sum())
        if locate is not None:
            n_covered += int((locate(p[~blocked]) >= 0).sum())
            n_hits += int((locate(p[blocked]) >= 0).sum())
            continue
        n_covered += int((locate_in_tets(vertices, tets, p[~blocked]) >= 0).sum())
        # in an obstacle: only the 8 nearest tetrahedra are checked
        n_hits += int((locate_in_tets(vertices, tets, p[blocked], rounds=()) >= 0).sum())
    return {
        "coverage": n_covered / max(n_free, 1),
        "free_fraction": n_free / max(samples, 1),
        "samples": samples,
        "in_obstacle_hits": n_hits,
    }


def _checked_samples(samples):
    """The sample count as an int; BuildError outside 0..MAX_COVERAGE_SAMPLES."""
    try:
        n = int(samples)
    except (TypeError, ValueError, OverflowError):
        n = -1
    if not 0 <= n <= MAX_COVERAGE_SAMPLES or n != samples:
        raise BuildError(f"coverage samples must be a whole number in "
                         f"0..{MAX_COVERAGE_SAMPLES}, got {samples}")
    return n


def clearance_violations(vertices, tets, obstacles, agent_radius=0.0):
    """Number of tetrahedra (on float32 positions) meeting an inflated obstacle."""
    v = np.asarray(vertices, np.float64).astype(np.float32).astype(np.float64)
    if not obstacles:
        return 0
    return int(tets_intersect_obstacles(v[np.asarray(tets)],
                                        _inflate(list(obstacles), agent_radius)).sum())


__all__ = ["tetrahedralize_free_space", "free_space_samples", "free_volume_coverage",
           "locate_in_tets", "clearance_violations", "TriangleMesh", "Sphere"]
