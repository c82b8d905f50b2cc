"""The mesh as a whole (docs/format.md: "The mesh as a whole"): no two
tetrahedra overlap, an [inferred] check (regn's builder guarantees it, other
writers may not); and the boundary's pinches, measured as quality
information (kind ``info``, never required): nothing in the research notes
says the title's meshes have none, and another tool's may have many.

The boundary is read from [seed] fields alone: a boundary face is one that
a single tetrahedron lists in its face slots, and its triangle is that
tetrahedron's vertices less the one off the face's stored plane (found in
:func:`regn.checks.tets.measures`, as the queries find it), whichever slot
holds the face. The computations live in :mod:`regn.geometry.manifold` and
:mod:`regn.geometry.overlap`; on a big map verify starts them on background
threads (:func:`start`).
"""

from __future__ import annotations

import numpy as np

from ..geometry.manifold import triangle_pinches
from ..geometry.overlap import overlapping_tets
from . import faces, tets
from ._report import Outcome, Part, listing

PART = Part("the mesh as a whole")


def boundary_triangles(run) -> np.ndarray:
    """(B,3) int64 the vertices of each face exactly one tetrahedron lists,
    in (tetrahedron, slot) order: the lister's four vertices less the one
    off the face's plane."""
    listed = run.fact(faces.measures).listed
    records = run.records.tets
    t, k = np.nonzero(listed[records["faces"]] == 1)
    off = run.fact(tets.measures).opposite[t, k]
    on_face = np.ones((len(t), 4), dtype=bool)
    on_face[np.arange(len(t)), off] = False
    return records["verts"][t].astype(np.int64)[on_face].reshape(-1, 3)


def pinches(run):
    """:class:`regn.geometry.manifold.Pinches` of the boundary triangles."""
    return triangle_pinches(boundary_triangles(run))


def overlaps(run):
    """:class:`regn.geometry.overlap.Overlaps` of the tetrahedra (on a big map
    on two threads; undecided, a failure, if its work budget runs out)."""
    return overlapping_tets(run.mesh.tet_points, run.mesh.tets,
                            threads=2 if run.threaded else 1)


def start(run):
    """Start both on background threads (their kernels release the GIL),
    the longer first; the pinches wait there for the face planes' measures."""
    run.start(overlaps)
    run.start(pinches)


@PART.check("boundary_no_pinch_edges", "info", "how many boundary edges lie in exactly "
            "two boundary triangles; a pinch edge, in four or more, is where tetrahedra "
            "meet only along an edge (quality, not required)",
            quality=("pinch edges", "boundary edges"))
def _(run):
    found = run.fact(pinches)
    edges = found.edges
    if not len(edges):
        return Outcome(found.n_edges, found.n_edges,
                       f"no pinch edge: every one of the {found.n_edges} edges of the "
                       f"{found.boundary_triangles} boundary triangles lies in two of them")
    return Outcome(found.n_edges - len(edges), found.n_edges,
                   listing(np.arange(len(edges)), lambda i: f"edge {edges[i].tolist()}",
                           f"pinch edges of {found.n_edges} (boundary edges not in exactly "
                           f"two boundary triangles: tetrahedra meet only along them)"))


@PART.check("boundary_no_pinch_vertices", "info", "how many boundary vertices have their "
            "boundary triangles in one fan; a pinch vertex has two or more, where "
            "tetrahedra meet only at it (quality, not required)",
            quality=("pinch vertices", "boundary vertices"))
def _(run):
    found = run.fact(pinches)
    if not len(found.vertices):
        return Outcome(found.n_vertices, found.n_vertices,
                       f"no pinch vertex: the boundary triangles around each of the "
                       f"{found.n_vertices} boundary vertices form one fan")
    return Outcome(found.n_vertices - len(found.vertices), found.n_vertices,
                   listing(found.vertices, lambda v: f"vertex {v}",
                           f"pinch vertices of {found.n_vertices} (boundary vertices "
                           f"whose triangles form two or more fans)"))


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
