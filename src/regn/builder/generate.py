"""``regn.generate``: a REGN navigation mesh from a box and its obstacles.

    mesh = regn.generate(((-5e4,) * 3, (5e4,) * 3), obstacles, agent_radius=50)
    mesh.build_report   # counts, detail and grid chosen, coverage, seconds per stage

The result always fits the format. Without a ``detail``, the builder starts
at :data:`DEFAULT_DETAIL` and lowers it until every count (vertices,
tetrahedra, faces) is within the u16 limit, as little as it can (the sample
count follows the detail about linearly, so each round scales it by the
overshoot); without ``dims``, the grid is the finest from the default down
whose cell references fit (:func:`.frame.fit_grid`). A given detail or dims
is kept, or refused with the setting that would fit. When nothing fits —
each obstacle needs a dozen points around it, whatever the detail — the
error says so.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import BuildError, LimitError
from ..format.layout import U16_MAX
from ..geometry.graph import components
from ..geometry.tets import face_keys, signed_volumes
from .frame import check_dims, check_float32_box
from .obstacles import check_seed, random_asteroid_field
from .world import clearance_violations, free_volume_coverage, tetrahedralize_free_space

#: The demo stage: a 100 km cube, 10 x 10 x 10 cells of 10 km, 40 asteroids.
DEMO_HALF_EXTENT = 50_000.0
DEMO_DIMS = (10, 10, 10)
DEMO_ASTEROIDS = 40
#: The detail an automatic build starts from (and never exceeds).
DEFAULT_DETAIL = 1.0
#: Each round aims this far under the limit.
FIT_MARGIN = 0.96
#: Rounds of lowering the detail before giving up, the lowest detail tried,
#: and the fall in a count below which a round no longer helps.
FIT_ROUNDS = 12
MIN_DETAIL = 1e-3
STALL = 0.98
#: Faces per sample point, at least (about 8 to 11 in practice).
FACES_PER_VERTEX = 8
#: The end of the advice when even the lowest detail does not fit.
FEWER_OBSTACLES = "use fewer obstacles"


def demo_field(seed=1, n=DEMO_ASTEROIDS, half_extent=DEMO_HALF_EXTENT):
    """``(bbox, obstacles)`` of the demo: ``random_asteroid_field(40, seed=1,
    half_extent=50_000)`` in the cube +-50 km (use ``dims=DEMO_DIMS``)."""
    h = float(half_extent)
    return ((-h, -h, -h), (h, h, h)), random_asteroid_field(n, seed=seed, half_extent=h)


def _largest_count(verts, tets):
    """``(what, count)``: the largest of the counts the u16 limit applies to
    before the grid (vertices, tetrahedra, faces)."""
    n_faces = len(np.unique(face_keys(tets))) if len(tets) else 0
    counts = {"vertices": len(verts), "tetrahedra": len(tets), "faces": n_faces}
    return max(counts.items(), key=lambda kv: kv[1])


def _tetrahedralize(lo, hi, obstacles, r, detail, seed, boundary=None, lattice=None):
    """``(verts, tets, report, what, count)`` at ``detail`` (the interior
    lattice at ``lattice``, at most ``detail``, if given); ``verts`` is None
    when the sample alone is past the vertex limit."""
    try:
        verts, tets, report = tetrahedralize_free_space(lo, hi, obstacles, agent_radius=r,
                                                        detail=detail, seed=seed,
                                                        boundary=boundary,
                                                        lattice_detail=lattice)
    except LimitError as e:
        if e.what is None:
            raise
        return None, None, None, e.what, e.count
    return (verts, tets, report, *_largest_count(verts, tets))


def _highest_fitting(lo, hi, obstacles, r, start, seed, boundary=None, lattice=None):
    """``(verts, tets, report)`` at the highest detail from ``start`` down
    whose counts fit; each round scales the detail by the overshoot (by at
    least half when the count hardly moved: a plateau of the lattice's
    rounding, or the floor of the obstacles' shells). LimitError when
    halving the detail no longer lowers the count."""
    d = start
    previous = (None, None, None)
    for _ in range(FIT_ROUNDS):
        verts, tets, report, what, count = _tetrahedralize(lo, hi, obstacles, r, d, seed,
                                                           boundary, lattice)
        if count <= U16_MAX:
            return verts, tets, report
        flat = previous[0] == what and count > STALL * previous[1]
        if flat and d <= 0.6 * previous[2] or d < MIN_DETAIL:
            break
        # a sample past the vertex limit will have several times as many faces
        step = FIT_MARGIN * U16_MAX / (count * (FACES_PER_VERTEX if what == "vertices" else 1))
        previous, d = (what, count, d), d * (min(step, 0.5) if flat else step)
    raise LimitError(f"{len(obstacles)} obstacles need {count} {what} even at detail "
                     f"{d:.2g}, more than the format's u16 limit of {U16_MAX}: "
                     f"{FEWER_OBSTACLES}", what=what, count=count)


def _round_down(x, digits=2):
    """``x`` rounded down to ``digits`` significant digits."""
    scale = 10.0 ** (np.floor(np.log10(x)) - digits + 1)
    return np.floor(x / scale) * scale


def _fit_detail(lo, hi, obstacles, r, detail, seed, boundary=None, lattice=None,
                lower=False):
    """``(verts, tets, report)`` at the given ``detail`` (LimitError, naming
    the detail that fits, when a count is past the limit; with ``lower``,
    the highest detail from it down that fits) or, without one, at the
    highest detail from :data:`DEFAULT_DETAIL` down that fits."""
    if detail is None or lower:
        start = DEFAULT_DETAIL if detail is None else detail
        verts, tets, report = _highest_fitting(lo, hi, obstacles, r, start, seed, boundary,
                                               lattice)
        report["detail_chosen"] = report["detail"] != detail
        return verts, tets, report
    verts, tets, report, what, count = _tetrahedralize(lo, hi, obstacles, r, detail, seed,
                                                       boundary, lattice)
    if count <= U16_MAX:
        report["detail_chosen"] = False
        return verts, tets, report
    message = (f"at --detail {detail:g} the mesh needs {count} {what}, more than the format's "
               f"u16 limit of {U16_MAX}")
    try:
        fits = _highest_fitting(lo, hi, obstacles, r, detail, seed, boundary,
                                lattice)[2]["detail"]
    except LimitError as e:
        raise LimitError(f"{message}, and so does every lower detail: {str(e).split(': ')[-1]}",
                         what=what, count=count) from None
    raise LimitError(f"{message}: lower --detail ({_round_down(fits):g} fits), or leave it "
                     "out", what=what, count=count)


def _checked_options(bbox, obstacles, agent_radius, detail, dims, seed):
    """``(lo, hi, obstacles, agent_radius)``, every option checked before
    any costly work."""
    check_seed(seed)
    lo, hi = check_float32_box(*(np.asarray(b, np.float64).reshape(3) for b in bbox))
    r = float(agent_radius)
    diagonal = float(np.linalg.norm(hi - lo))
    if not (np.isfinite(r) and 0 <= r <= diagonal):
        raise BuildError(f"agent_radius (--agent-radius) must be in 0..{diagonal:.6g} m (the box's "
                         f"diagonal), got {agent_radius}")
    if detail is not None and not (np.isfinite(float(detail)) and float(detail) > 0):
        raise BuildError(f"detail must be > 0, got {detail}")
    if dims is not None:
        check_dims(dims)
    return lo, hi, list(obstacles or ()), r


def generate(bbox, obstacles=(), *, agent_radius=0.0, dims=None, detail=None, seed=0,
             progress=None, coverage_samples=200_000, boundary=None, level=None,
             lattice_detail=None, lower_detail=False, **level_options):
    """A :class:`regn.Mesh` of the free space of ``bbox`` (``(min, max)``) around
    ``obstacles`` (:class:`~regn.builder.obstacles.Sphere` /
    :class:`~regn.builder.obstacles.TriangleMesh`) inflated by ``agent_radius``.

    ``detail`` (sample density, default: the highest from 1 down that fits)
    and ``dims`` (grid cells per axis, default: the finest from about 10 km
    cells down that fits) are chosen so that the mesh fits the format when
    not given, and kept or refused with a hint when given.

    The build report is attached as ``mesh.build_report`` (a dict: counts,
    ``detail`` and ``dims`` with whether they were chosen, ``coverage`` of
    the free volume, ``clearance_violations`` (0 = no tetrahedron meets an
    inflated obstacle), the boundary's pinches (always 0), ``seconds`` per
    stage). ``progress``, if given, is called as ``progress(stage, fraction)``.
    Raises :class:`LimitError` when no setting fits, or a given one does not.

    ``level``: a triangle soup or voxel level (:class:`regn.levels.Soup`,
    :class:`regn.levels.Voxels`, or a soup file's path; ``bbox`` may then be
    None for its bounds) goes to :func:`regn.levels.generate_level`, with
    ``obstacles`` merged in and ``level_options`` (``crack``,
    ``voxel_size``, ``min_block``, ``max_voxels``) passed on.
    ``boundary`` (M,3): the sample of the box's walls, given (see
    :func:`regn.builder.world.free_space_samples`; the tiles of a world).
    ``lattice_detail``: the interior lattice's density, when it should be
    coarser than ``detail`` (which then sets the obstacles' shells only);
    ``lower_detail``: a given detail is the highest, lowered (as without
    one) where the mesh does not fit, instead of refused.
    A world of tiles too large for one REGN: :func:`regn.world.build`.
    """
    from .tetmesh import build
    if level is not None:
        if detail is not None:
            raise BuildError("detail does not apply to a level (see min_block)")
        from ..levels.route import generate_with_level
        return generate_with_level(bbox, obstacles or (), level, agent_radius=agent_radius,
                                   dims=dims, seed=seed, progress=progress,
                                   coverage_samples=coverage_samples, **level_options)
    if level_options:
        raise TypeError(f"generate() got unexpected options {sorted(level_options)}")

    def tick(stage, frac):
        if progress is not None:
            progress(stage, frac)

    lo, hi, obstacles, r = _checked_options(bbox, obstacles, agent_radius, detail, dims, seed)
    if lattice_detail is not None and not (np.isfinite(float(lattice_detail))
                                           and float(lattice_detail) > 0):
        raise BuildError(f"lattice detail must be > 0, got {lattice_detail}")
    t0 = time.perf_counter()
    tick("tetrahedralize", 0.0)
    verts, tets, report = _fit_detail(lo, hi, obstacles, r, detail, seed, boundary,
                                      lattice_detail, lower_detail)
    seconds = dict(report.pop("seconds"))
    seconds["fit_detail"] = time.perf_counter() - t0 - seconds["total"]
    tick("build", 0.5)
    t1 = time.perf_counter()
    mesh = build(verts, tets, bbox=(lo, hi), dims=dims)
    seconds["regn_build"] = time.perf_counter() - t1
    tick("check", 0.7)
    t2 = time.perf_counter()
    viol = clearance_violations(mesh.vertices, mesh.tets, obstacles, r)
    seconds["clearance_check"] = time.perf_counter() - t2
    tick("coverage", 0.8)
    t3 = time.perf_counter()
    cov = free_volume_coverage(mesh.vertices, mesh.tets, lo, hi, obstacles, r,
                               samples=coverage_samples, seed=0, locate=mesh.locate) \
        if coverage_samples else {}
    seconds["coverage"] = time.perf_counter() - t3
    seconds["total"] = time.perf_counter() - t0
    report.update(mesh.build_report)
    report.update({
        "vertices": int(mesh.n_vertices), "tets": int(mesh.n_tets),
        "faces": int(mesh.n_faces), "cells": int(mesh.n_cells), "refs": int(mesh.n_refs),
        "components": components(mesh.neighbors)[0],
        "volume_fraction": float(np.abs(signed_volumes(mesh.tet_points)).sum()
                                 / np.prod(hi - lo)),
        "coverage": cov.get("coverage"), "free_fraction": cov.get("free_fraction"),
        "coverage_samples": cov.get("samples"),
        "clearance_violations": viol, "clearance_ok": viol == 0,
        "seconds": seconds,
    })
    tick("done", 1.0)
    mesh.build_report = report
    return mesh


__all__ = ["generate", "demo_field", "DEMO_DIMS"]
