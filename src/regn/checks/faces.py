"""Face records (docs/format.md: "Face, 48 bytes"): the plane, the fixed
words, and the A/B block against the tetrahedra that list each face."""

from __future__ import annotations

import numpy as np

from ..format.layout import F32_ONE_BITS, NO_SLOT, NO_TET
from ..tolerances import UNIT_TOL
from ._report import Part, at, fmt, outcome_of

PART = Part("faces")


def measures(run):
    """:data:`regn.checks._kernels.FaceMeasures` of the faces (a kernel;
    on a big map verify runs it on a background thread)."""
    from ._kernels import face_measures
    return face_measures(run.records)


@PART.check("face_normals_unit", "seed", "n is a unit vector")
def _(run):
    length = run.fact(measures).length
    normal = run.records.faces["normal"]
    return outcome_of(~(np.abs(length - 1.0) <= UNIT_TOL),
                      lambda f: f"face {f} |n| = {length[f]:.7g} (n = {fmt(normal[f])})",
                      f"faces with | |n|-1 | > {UNIT_TOL:g}")


@PART.check("face_point_on_plane", "seed", "the stored point p lies on the plane: "
            "n.p + d = 0")
def _(run):
    res = run.fact(measures).residual
    faces = run.records.faces
    return outcome_of(~(np.abs(res) <= run.tol),
                      lambda f: f"face {f} n.p+d = {res[f]:.4g} m (p = "
                                f"{fmt(faces['point'][f])}, d = {fmt(faces['d'][f])})",
                      f"faces with |n.p+d| > {run.tol:.3g} m")


@PART.check("face_w_one", "seed", "the word after the point is 1.0f")
def _(run):
    w = run.records.faces["w"]
    return outcome_of(w != F32_ONE_BITS, lambda f: f"face {f} {at('faces', 'w')} = "
                      f"{int(w[f]):#010x}", f"faces whose {at('faces', 'w')} is not 1.0f")


@PART.check("face_own_index", "seed", "a face's own index is its record index")
def _(run):
    own = run.records.faces["own"]
    return outcome_of(own != np.arange(len(own)), lambda f: f"face {f} own = {own[f]}",
                      "faces whose own index is not their record index")


@PART.check("face_tet_a_slot", "seed", "face f is tet[A].faces[slot_a]")
def _(run):
    faces, a_lists = run.records.faces, run.fact(measures).a_lists
    return outcome_of(a_lists != np.arange(len(faces)),
                      lambda f: f"face {f}: A = tet {faces['tet_a'][f]} slot "
                                f"{faces['slot_a'][f]}, which lists face {a_lists[f]}",
                      "faces f with tet[A].faces[slot_a] != f")


@PART.check("faces_listed_once_or_twice", "seed", "every face is listed by one or two "
            "tetrahedra")
def _(run):
    listed = run.fact(measures).listed
    return outcome_of((listed < 1) | (listed > 2),
                      lambda f: f"face {f} listed by {listed[f]} tetrahedra",
                      "faces not listed by one or two tetrahedra")


@PART.check("face_tet_b_slot", "inferred", "B/slot_b name the second tetrahedron listing "
            "the face, NO_TET/0xFF on the boundary")
def _(run):
    faces = run.records.faces
    listed, other, _, b = run.fact(measures)[:4]
    bad = np.where(listed == 1, b != -1, (listed == 2) & (b != other))

    def describe(f):
        tb, sb = faces["tet_b"][f], faces["slot_b"][f]
        want = f", expected tet {other[f] // 4} slot {other[f] % 4}" if listed[f] == 2 \
            else ", expected NO_TET/0xFF"
        return (f"face {f} (listed {listed[f]}x): B = {'NO_TET' if tb == NO_TET else tb} "
                f"slot {'0xFF' if sb == NO_SLOT else sb}{want}")
    return outcome_of(bad, describe, "faces whose B/slot_b is not the other tetrahedron "
                                     "(NO_TET/0xFF on the boundary)")


@PART.check("face_zero_field", "inferred", "the last u16 of a face is zero")
def _(run):
    z = run.records.faces["zero"]
    return outcome_of(z != 0, lambda f: f"face {f} {at('faces', 'zero')} = {int(z[f]):#06x}",
                      f"faces with a non-zero {at('faces', 'zero')}")
