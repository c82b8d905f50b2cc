"""The mesh as a whole (docs/format.md: "The mesh as a whole"): the boundary
is a closed 2-manifold, and no two tetrahedra overlap. Both are measured
[inferred] checks: regn's builder guarantees them, other writers (the game's
own files among them) may not. Their computations live in
:mod:`regn.geometry.manifold` and :mod:`regn.geometry.overlap`; on a big map
verify starts them on background threads (:func:`start`).
"""

from __future__ import annotations

import numpy as np

from ..geometry import FACE_SLOTS
from ..geometry.manifold import triangle_pinches
from ..geometry.overlap import overlapping_tets
from ._report import Outcome, Part, listing

PART = Part("the mesh as a whole")


def pinches(run):
    """:class:`regn.geometry.manifold.Pinches` of the faces one tetrahedron
    lists (by the tetrahedra's face indices)."""
    mesh = run.mesh
    tets, tet_faces = mesh.tets, mesh.tet_faces
    listed = np.bincount(tet_faces.ravel(), minlength=1)
    t, k = np.nonzero(listed[tet_faces] == 1)
    return triangle_pinches(np.asarray(tets)[t[:, None], FACE_SLOTS[k]])


def overlaps(run):
    """:class:`regn.geometry.overlap.Overlaps` of the tetrahedra (on a big map
    on two threads; undecided, a failure, if its work budget runs out)."""
    return overlapping_tets(run.mesh.tet_points, run.mesh.tets,
                            threads=2 if run.threaded else 1)


def start(run):
    """Start both on background threads (their kernels release the GIL),
    the longer first."""
    run.start(overlaps)
    run.start(pinches)


@PART.check("boundary_no_pinch_edges", "inferred", "every boundary edge lies in exactly two "
            "boundary triangles (no two tetrahedra meet only along an edge)")
def _(run):
    found = run.fact(pinches)
    edges = found.edges
    if not len(edges):
        return Outcome(found.n_edges, found.n_edges,
                       f"every one of the {found.n_edges} edges of the "
                       f"{found.boundary_triangles} boundary triangles lies in two of them")
    return Outcome(found.n_edges - len(edges), found.n_edges,
                   listing(np.arange(len(edges)), lambda i: f"edge {edges[i].tolist()}",
                           "boundary edges not in exactly two boundary triangles (two "
                           "tetrahedra meet only along them)"))


@PART.check("boundary_no_pinch_vertices", "inferred", "the boundary triangles around each "
            "boundary vertex form one fan (no two tetrahedra meet only at a vertex)")
def _(run):
    found = run.fact(pinches)
    if not len(found.vertices):
        return Outcome(found.n_vertices, found.n_vertices,
                       f"the boundary triangles around each of the {found.n_vertices} "
                       "boundary vertices form one fan")
    return Outcome(found.n_vertices - len(found.vertices), found.n_vertices,
                   listing(found.vertices, lambda v: f"vertex {v}",
                           "boundary vertices whose triangles form two or more fans"))


@PART.check("tets_do_not_overlap", "inferred", "the interiors of any two tetrahedra are "
            "disjoint (they may share faces, edges, vertices, and touch)")
def _(run):
    over = run.fact(overlaps)
    pairs = over.pairs
    if not over.decided:
        # the work budget ran out (a hostile file): never a pass
        found = (f"; {len(pairs)} pairs found overlapping by more than {over.tolerance:.3g} m, "
                 f"e.g. tets {pairs[0].tolist()}" if len(pairs) else "")
        return Outcome(over.tested - len(pairs), over.tested + 1,
                       f"not decided: the test stopped when its work budget ran out, after "
                       f"testing {over.tested} pairs of tetrahedra{found}")
    if not len(pairs):
        return Outcome(over.tested, over.tested,
                       f"none of the {over.tested} pairs of tetrahedra tested (those listing "
                       f"one face, those just inside the boundary where an overlap would "
                       f"show; regn.geometry.overlap says why the rest cannot) overlaps by "
                       f"more than {over.tolerance:.3g} m")
    return Outcome(over.tested - len(pairs), over.tested,
                   listing(np.arange(len(pairs)), lambda i: f"tets {pairs[i].tolist()}",
                           f"pairs of tetrahedra overlapping by more than "
                           f"{over.tolerance:.3g} m"))
