"""Is the boundary of a tetrahedral mesh a closed 2-manifold?

The boundary is every triangle listed by exactly one tetrahedron. It is a
closed 2-manifold when

* every boundary edge lies in exactly two boundary triangles — a **pinch
  edge** lies in four or more: two tetrahedra meet only along that edge,
  across free space (an odd number happens only where a face is listed by
  three tetrahedra; such edges are counted with the pinch edges);
* the boundary triangles around each vertex form one fan — a **pinch
  vertex** has two or more fans that share no edge: the tetrahedra meet
  only at that point, or the free space wraps around it like a ring.

A pinch edge is not counted again at its end points: the fans of a vertex
are joined across every edge they share, pinched or not. The work runs in
the compiled kernel :func:`regn.geometry._manifold_kernels.boundary_pinches`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .tets import face_keys, sorted_face_vertices


class Pinches(NamedTuple):
    """What keeps a tetrahedral mesh's boundary from being a closed 2-manifold."""
    boundary_triangles: int
    edges: np.ndarray        # (E,2) boundary edges not in exactly two boundary triangles
    vertices: np.ndarray     # (P,) vertices whose boundary triangles form 2+ fans
    n_edges: int             # distinct edges of the boundary triangles
    n_vertices: int          # distinct vertices of the boundary triangles

    @property
    def closed(self) -> bool:
        """No pinch edge and no pinch vertex."""
        return not len(self.edges) and not len(self.vertices)


def boundary_triangles(tets) -> np.ndarray:
    """(B,3) the sorted vertex triples of the faces listed by exactly one
    tetrahedron of ``tets`` (T,4), in order of first appearance."""
    tets = np.asarray(tets, np.int64).reshape(-1, 4)
    if not len(tets):
        return np.zeros((0, 3), np.int64)
    _, first, counts = np.unique(face_keys(tets), return_index=True, return_counts=True)
    once = np.sort(first[counts == 1])
    return sorted_face_vertices(tets)[once]


def triangle_pinches(triangles) -> Pinches:
    """The pinch edges and pinch vertices of a mesh's boundary given as its
    triangles (B,3) of vertex indices (any order within a row)."""
    tris = np.ascontiguousarray(np.sort(np.asarray(triangles, np.int64).reshape(-1, 3),
                                        axis=1))
    if not len(tris):
        return Pinches(0, np.zeros((0, 2), np.int64), np.zeros(0, np.int64), 0, 0)
    from ._manifold_kernels import boundary_pinches
    edges, vertices, n_edges, n_vertices = boundary_pinches(tris)
    return Pinches(len(tris), edges, vertices, int(n_edges), int(n_vertices))


def pinches(tets) -> Pinches:
    """The pinch edges and pinch vertices of the boundary of the tetrahedral
    mesh ``tets`` (T,4) vertex indices (see the module docstring)."""
    return triangle_pinches(boundary_triangles(tets))
