"""Every tolerance regn uses, in one place.

Relative tolerances are dimensionless: each says what it is relative to.
Absolute ones are in metres. Kernels read these as compile-time constants.
"""

#: A point is inside a tetrahedron when its smallest barycentric coordinate
#: is >= -BARY_TOL (dimensionless, so independent of the map's scale).
BARY_TOL = 1e-9

#: ``| |n| - 1 |`` allowed for a stored face normal (float32 normalising gives
#: ~1e-7; 1e-5 leaves room for another writer's arithmetic).
UNIT_TOL = 1e-5

#: Distances checked by verify (plane residuals, centre/radius, portal costs),
#: relative to the map's scale ``max(|bbox min|, |bbox max|, extent)``: about
#: 160 float32 ulps at that scale, ~0.9 m on a +-50 km map.
GEOM_REL = 1e-5

#: "Touching counts" tests, relative to the map's size.
TOUCH_REL = 1e-9

#: Two tetrahedra whose interiors overlap by less than this fraction of the
#: map's size (0.1 m on a 100 km map) only touch: rounding positions to
#: float32 (6e-8 relative) moves a vertex that lay on a neighbour's face a
#: few ulps into it. A real overlap is metres to kilometres deep.
OVERLAP_REL = 1e-6

#: The overlap test's vertex certificates (regn.geometry._star_kernels) take
#: a direction as lying on one side of a plane through the vertex only when
#: the sine of the angle between them exceeds this; nearer, the vertex is
#: left uncertified and its pairs to the exact tests. The face normals they
#: use are stored in float32, whose rounding moves that sine by at most
#: ~2e-7 (float64 arithmetic: ~1e-16).
SIDE_REL = 1e-6

#: A tetrahedron whose volume is below this fraction of its bounding cube
#: (largest extent cubed) is degenerate.
DEGENERATE_REL = 1e-12

#: A tetrahedron's stored sphere "reaches" a cell when the distance from its
#: centre to the cell box is at most radius * (1 + SPHERE_REACH_REL).
SPHERE_REACH_REL = 1e-6

#: The search's Euclidean bound is used only when every stored cost is at
#: least the straight distance times (1 - ADMISSIBLE_SLACK); the bound itself
#: is shrunk by as much.
ADMISSIBLE_SLACK = 1e-6

#: The smoother stops at this certified relative optimality gap.
SMOOTH_RTOL = 1e-4

#: A wall triangle is "flat" (solved on its edges) when the squared sine of its
#: angle is below this.
FLAT_SIN2 = 1e-14

#: A segment's exit fraction past 1 + SEGMENT_END_TOL means the walk went
#: past the segment's end point.
SEGMENT_END_TOL = 1e-12

#: Two segments are parallel (their closest points solved on the ends) when
#: the squared sine of the angle between them is below this.
PARALLEL_SIN2 = 1e-14

#: The builder merges sample points closer than this fraction of the box's
#: diagonal (keeping the first: corners, walls, lattice, shells).
SAMPLE_MERGE_REL = 1e-5

#: locate gives a tetrahedron no inverse barycentric matrix (so never returns
#: it) when the determinant of its edge vectors is at most this times the
#: cube of its largest vertex offset from vertex 0.
SINGULAR_REL = 1e-12

#: locate's box test widens the header box by this times (its largest
#: |coordinate| + 1 m), so a point on a box wall is still tested.
BOX_SLACK_REL = 1e-9

#: The fine location grid lists a tetrahedron in every cell its bounding box
#: reaches or comes within this fraction of a cell of (and that it may hold a
#: point of).
CELL_SLACK = 1e-9

#: A bound computed in float64 that decides what a search may skip is
#: loosened by this fraction of the magnitudes summed in it (thousands of
#: rounding errors), so that rounding never skips what could be the answer.
ROUND_REL = 1e-12

#: The smoother also stops once its certified gap is below this, in units of
#: the corridor's centroid-polyline length (rounding makes smaller gaps
#: meaningless).
SMOOTH_GAP_FLOOR = 1e-13

#: A path for an agent of radius r keeps every point at least
#: r + CLEARANCE_MARGIN_REL * max(r, box scale) from every wall (box scale: the
#: largest |coordinate| of the header box), so that rounding in anyone's
#: distance arithmetic never finds it closer than r.
CLEARANCE_MARGIN_REL = 1e-9

#: The smoother of a path with a radius (regn.query.radius.keep_clear): each round's
#: barrier method stops at this certified relative gap, and the rounds once
#: one gains less. Ten times SMOOTH_RTOL: the answer is then polished into
#: the exact optimum of the constraints it rests on (regn.query.paths.waypoints);
#: the gap bounds what is lost only where the polish does not settle.
RADIUS_SMOOTH_RTOL = 1e-3

#: A path's waypoints: of two consecutive points closer than this fraction of
#: the path's length, one is dropped, as long as that changes the length by
#: less than 1e-9 of it (regn.query.paths.waypoints).
WAYPOINT_GAP_REL = 1e-6

#: A point's path bends exactly on portal edges, some of them walls; each
#: turning point is moved this fraction of its portal's longest edge (or 10
#: or 100 times it, the first that the segment walk finds clear) away from
#: the corner it turns round, so that no waypoint lies on a wall
#: (regn.query.paths.waypoints). Above BARY_TOL, far below any length that matters.
WAYPOINT_NUDGE_REL = 1e-8

#: The segment filter of line_of_sight decides a segment only when every wall
#: is at least this fraction of the map's scale (largest |bbox coordinate| +
#: largest extent) away from it, or crossed that far inside its edges; closer
#: calls go to the exact walk (a thousand times BARY_TOL: ~0.15 m on a
#: +-50 km map).
SIGHT_MARGIN_REL = 1e-6

#: a swept sphere whose entry into a wall's r-neighbourhood comes out
#: (by rounding) at most this fraction of r before the segment's start,
#: touches at the start: its clearance there is r to within rounding
SWEEP_START_REL = 1e-9
