"""Generic geometry shared by the builder, the checks, the queries and the
exports: one implementation of each computation, on float64 arrays in
metres, over whole batches.

=================  ==========================================================
``tets``           slot tables (:data:`FACE_SLOTS`, :data:`TET_EDGES`),
                   volumes, degeneracy, faces keyed by their vertices,
                   point-in-tetrahedron, point location in bare tetrahedra
``grid``           cell coordinates and boxes, expanding ranges, which cells
                   each tetrahedron meets (:func:`grid_membership`)
``pairs``          candidate pairs from bounding boxes (the broad phase)
``distance``       exact point/segment/triangle/tetrahedron/ball distances
                   and intersection tests
``surface``        inside a closed triangle surface (ray parity)
``graph``          connected components of tetrahedra through shared faces
``sampling``       the Fibonacci sphere
``manifold``       a boundary's pinch edges and pinch vertices
``overlap``        tetrahedra whose interiors overlap
``_*_kernels``     the compiled kernels (numba; imported on first use):
                   ``_cell_kernels`` (grid cells), ``_closest_kernels``
                   (closest points, point in tetrahedron),
                   ``_segment_kernels`` (segments, swept spheres),
                   ``_tet_pair_kernels``, ``_face_listing_kernels``,
                   ``_face_proximity_kernels``, ``_star_kernels`` (overlaps),
                   ``_manifold_kernels``, ``_graph_kernels``
=================  ==========================================================

Tolerances come from :mod:`regn.tolerances`. This package imports numpy
only; scipy and numba are imported inside the functions that need them.
"""

from __future__ import annotations

from .grid import (cell_bounds, cell_coords, cell_ijk, expand_cell_ranges, expand_counts,
                   grid_membership, grid_membership_split, linear_cell)
from .tets import (FACE_SLOTS, TET_EDGES, degenerate_threshold, face_slot_vertices,
                   signed_volumes)

__all__ = ["FACE_SLOTS", "TET_EDGES", "cell_bounds", "cell_coords", "cell_ijk",
           "degenerate_threshold", "expand_cell_ranges", "expand_counts",
           "face_slot_vertices", "grid_membership", "grid_membership_split",
           "linear_cell", "signed_volumes"]
