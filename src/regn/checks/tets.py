"""Tetrahedron records (docs/format.md: "Tetrahedron, 96 bytes"): volume and
orientation, the face planes through the vertices, the centre and radius,
the portal costs and the unknown tail."""

from __future__ import annotations

import numpy as np

from ..format.layout import PORTAL_PAIRS, SIZES, field_offsets
from ..tolerances import DEGENERATE_REL
from . import faces
from ._report import Outcome, Part, fmt, hexs, listing, outcome_of

PART = Part("tetrahedra")


def measures(run):
    """:data:`regn.checks._kernels.TetMeasures` of the tetrahedra (a kernel;
    on a big map verify runs it on a background thread, after the faces')."""
    from ._kernels import tet_measures
    return tet_measures(run.records, run.fact(faces.measures).listed)


def _vertex_list(run, t):
    return run.records.tets["verts"][t].tolist()


@PART.check("tet_volume_nonzero", "seed", "no tetrahedron is degenerate")
def _(run):
    m = run.fact(measures)
    return outcome_of(~(np.abs(m.vol) > DEGENERATE_REL * m.size ** 3),
                      lambda t: f"tet {t} verts {_vertex_list(run, t)} volume "
                                f"{m.vol[t]:.4g} m^3", "degenerate tetrahedra")


@PART.check("tet_orientation_positive", "inferred", "every signed volume is positive")
def _(run):
    vol = run.fact(measures).vol
    return outcome_of(~(vol > 0), lambda t: f"tet {t} verts {_vertex_list(run, t)} signed "
                                            f"volume {vol[t]:.4g} m^3",
                      "tetrahedra with signed volume <= 0")


@PART.check("face_plane_through_tet", "seed", "each face slot's plane passes through "
            "three of the tetrahedron's four vertices")
def _(run):
    third = run.fact(measures).third
    tf = run.records.tets["faces"]

    def describe(i):
        t, k = divmod(i, 4)
        face = run.records.faces[tf[t, k]]
        n, d = face["normal"].astype(np.float64), np.float64(face["d"])
        p = run.records.vertices[run.records.tets["verts"][t]]
        dist = (n[0] * p[:, 0] + n[2] * p[:, 2]) + n[1] * p[:, 1] + d
        return f"tet {t} slot {k} face {tf[t, k]}: vertex distances {fmt(dist)} m"
    return outcome_of(~(third <= run.tol), describe,
                      f"(tet, slot) pairs whose face plane misses 3 of the 4 vertices by > "
                      f"{run.tol:.3g} m")


@PART.check("face_normal_out_of_a", "inferred", "a face's normal points out of "
            "tetrahedron A")
def _(run):
    off = run.fact(measures).a_off
    return outcome_of(~(off < 0), lambda f: f"face {f}: A's off-plane vertex at n.v+d = "
                                            f"{off[f]:.4g} m (should be < 0)",
                      "faces whose normal does not point out of A")


@PART.check("tet_centre_radius", "inferred", "centre = vertex mean, radius = largest "
            "vertex distance from it")
def _(run):
    m = run.fact(measures)
    centre, radius = run.records.tets["centre"], run.records.tets["radius"]
    bad = ~((m.centre_err <= run.tol) & (np.abs(radius - m.spread) <= run.tol))
    return outcome_of(bad, lambda t: f"tet {t}: centre {fmt(centre[t])} vs mean "
                                     f"{fmt(m.mean[t])}, radius {fmt(radius[t])} vs "
                                     f"{fmt(m.spread[t])}",
                      f"tetrahedra whose centre/radius differ from the vertex mean / max "
                      f"distance by > {run.tol:.3g} m")


def _portals(run):
    """(cost, aux) (T,6) as stored."""
    portal = run.records.tets["portal"]
    return portal[..., 0], portal[..., 1]


@PART.check("portal_cost_rule", "inferred", "cost = |centroid(face i) - centroid(face j)|; "
            "aux = 0 when either face is on the boundary, else cost")
def _(run):
    m = run.fact(measures)
    cost, aux = run.fact(_portals)

    def describe(i):
        want = m.want.flat[i]
        return (f"tet {i // 6} pair {PORTAL_PAIRS[i % 6]}: (cost, aux) = ({fmt(cost.flat[i])}, "
                f"{fmt(aux.flat[i])}), rule gives ({fmt(want)}, "
                f"{fmt(0.0 if m.edge.flat[i] else want)})")
    return outcome_of(~(m.portal_off <= run.tol), describe,
                      "(tet, pair) portal costs off the rule cost=|c_i-c_j|, aux=0 at a "
                      "boundary else cost")


@PART.check("portal_cost_identity_rate", "info", "how often aux == cost")
def _(run):
    cost, aux = run.fact(_portals)
    same = int(np.count_nonzero(cost == aux))
    return Outcome(same, cost.size, f"aux == cost in {same} of {cost.size} pairs; aux == 0 "
                                    f"in {int(np.count_nonzero(aux == 0))}")


@PART.check("tet_unknown_fields", "info", "the [unknown] tail words (written 0)")
def _(run):
    tets = run.records.tets
    a, b, zero = tets["field_a"], tets["field_b"], tets["zero"]
    nonzero = (a != 0) | (b != 0) | (zero[:, 0] != 0) | (zero[:, 1] != 0)
    tail = f"+0x{field_offsets('tets')['field_a']:X}..+0x{SIZES['tets'] - 1:X}"
    if not nonzero.any():
        return Outcome(len(tets), len(tets), f"{tail} zero in every tetrahedron")
    return Outcome(len(tets) - int(nonzero.sum()), len(tets),
                   listing(np.flatnonzero(nonzero), lambda t: f"tet {t} A={int(a[t]):#x} "
                           f"B={int(b[t]):#x} zero={hexs(zero[t].tolist())}",
                           f"tetrahedra with a non-zero {tail}"))
