"""``regn.generate``: a REGN navigation mesh from a box and its obstacles.

    mesh = regn.generate(((-5e4,) * 3, (5e4,) * 3), obstacles, agent_radius=50)
    mesh.build_report   # counts, coverage, clearance check, seconds per stage
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import LimitError
from ..geometry.graph import components
from .obstacles import random_asteroid_field
from .world import (ADVICE, clearance_violations, free_volume_coverage,
                    tetrahedralize_free_space)

#: The demo stage: a 100 km cube, 10 x 10 x 10 cells of 10 km, 40 asteroids.
DEMO_HALF_EXTENT = 50_000.0
DEMO_DIMS = (10, 10, 10)
DEMO_ASTEROIDS = 40


def demo_field(seed=1, n=DEMO_ASTEROIDS, half_extent=DEMO_HALF_EXTENT):
    """``(bbox, obstacles)`` of the demo: ``random_asteroid_field(40, seed=1,
    half_extent=50_000)`` in the cube +-50 km (use ``dims=DEMO_DIMS``)."""
    h = float(half_extent)
    return ((-h, -h, -h), (h, h, h)), random_asteroid_field(n, seed=seed, half_extent=h)


def _advise(err: LimitError) -> LimitError:
    msg = str(err)
    if ADVICE in msg:
        return err
    return LimitError(f"{msg.split(': ')[0]}: {ADVICE}")


def generate(bbox, obstacles=(), *, agent_radius=0.0, dims=None, detail=1.0, seed=0,
             progress=None, coverage_samples=200_000):
    """A :class:`regn.Mesh` of the free space of ``bbox`` (``(min, max)``) around
    ``obstacles`` (:class:`~regn.builder.obstacles.Sphere` /
    :class:`~regn.builder.obstacles.TriangleMesh`) inflated by ``agent_radius``.

    The build report is attached as ``mesh.build_report`` (a dict: counts,
    ``coverage`` of the free volume, ``clearance_violations`` (0 = no
    tetrahedron meets an inflated obstacle), ``seconds`` per stage).
    ``progress``, if given, is called as ``progress(stage, fraction)``.
    Raises :class:`LimitError` (advising ``lower --detail or pass --dims``)
    when the result does not fit the format's u16 counts.
    """
    from .tetmesh import build

    def tick(stage, frac):
        if progress is not None:
            progress(stage, frac)

    lo, hi = (np.asarray(b, np.float64).reshape(3) for b in bbox)
    obstacles = list(obstacles or ())
    t0 = time.perf_counter()
    tick("tetrahedralize", 0.0)
    try:
        verts, tets, report = tetrahedralize_free_space(lo, hi, obstacles,
                                                        agent_radius=agent_radius,
                                                        detail=detail, seed=seed)
    except LimitError as e:
        raise _advise(e) from None
    seconds = dict(report.pop("seconds"))
    tick("build", 0.5)
    t1 = time.perf_counter()
    try:
        mesh = build(verts, tets, bbox=(lo, hi), dims=dims)
    except LimitError as e:
        raise _advise(e) from None
    seconds["regn_build"] = time.perf_counter() - t1
    tick("check", 0.7)
    t2 = time.perf_counter()
    viol = clearance_violations(mesh.vertices, mesh.tets, obstacles, agent_radius)
    seconds["clearance_check"] = time.perf_counter() - t2
    tick("coverage", 0.8)
    t3 = time.perf_counter()
    cov = free_volume_coverage(mesh.vertices, mesh.tets, lo, hi, obstacles, agent_radius,
                               samples=coverage_samples, seed=0) if coverage_samples else {}
    seconds["coverage"] = time.perf_counter() - t3
    seconds["total"] = time.perf_counter() - t0
    n_comp = components(mesh.neighbors)[0]
    report.update({
        "vertices": int(mesh.n_vertices), "tets": int(mesh.n_tets),
        "faces": int(mesh.n_faces), "cells": int(mesh.n_cells), "refs": int(mesh.n_refs),
        "dims": list(mesh.dims), "components": n_comp,
        "coverage": cov.get("coverage"), "free_fraction": cov.get("free_fraction"),
        "coverage_samples": cov.get("samples"),
        "clearance_violations": viol, "clearance_ok": viol == 0,
        "seconds": seconds,
    })
    tick("done", 1.0)
    mesh.build_report = report
    return mesh


__all__ = ["generate", "demo_field", "DEMO_DIMS"]
