"""Where the geometry meets the header and the grid (docs/format.md: "The
grid", the builder's rule for which tetrahedra a cell lists; and the
vertices against the header's box)."""

from __future__ import annotations

import numpy as np

from ..geometry import cell_bounds, grid_membership
from ..tolerances import SPHERE_REACH_REL
from ._report import Outcome, Part, fmt, listing, outcome_of
from .tets import measures

#: The vertices against the header's box (reported before the faces).
VERTICES = Part("vertices")
#: The grid's lists against the tetrahedra (reported after them).
GRID = Part("grid rule")


@VERTICES.check("vertices_in_bbox", "inferred", "every vertex lies inside the header's box")
def _(run):
    mesh = run.mesh
    v, lo, hi = mesh.vertices, mesh.bbox_min, mesh.bbox_max
    return outcome_of(np.any((v < lo) | (v > hi), axis=1),
                      lambda i: f"vertex {i} at {fmt(v[i])}",
                      f"vertices outside the bbox {fmt(lo)}..{fmt(hi)}")


def grid_pairs(run):
    """(cells, tets): every (cell, tetrahedron) pair whose closed cell box the
    tetrahedron meets, sorted by cell (on a big map verify runs it in
    pieces on two background threads)."""
    mesh = run.mesh
    return grid_membership(mesh.tet_points, mesh.bbox_min, mesh.cell_size, mesh.dims)


def _listed(run):
    """The file's grid: (indptr, ref_cell, ref_tet) of every reference."""
    indptr, ref_tet = run.mesh.grid_csr
    return indptr, np.repeat(np.arange(run.mesh.n_cells), np.diff(indptr)), ref_tet


def _compare(run):
    """The file's references against the expected pairs: hit (R,), the keys
    (cell * K + tet, K = max(T, 1)) of the expected pairs not listed and of
    the listed pairs not expected (sorted, unique), listed_home (T,), and
    how many references repeat one in the same cell."""
    from ._kernels import GridPairs, grid_compare
    indptr, ref_cell, ref_tet = run.fact(_listed)
    exp_cell, exp_tet = run.fact(grid_pairs)
    hit, exp_listed, listed_home, dupes = grid_compare(GridPairs(
        indptr, ref_tet, exp_cell, exp_tet, run.fact(measures).home))
    key = max(run.mesh.n_tets, 1)
    missing = (exp_cell * key + exp_tet)[~exp_listed]
    extra = np.unique((ref_cell * key + ref_tet)[~hit])
    return hit, missing, extra, listed_home, int(dupes)


@GRID.check("listed_tets_intersect_cell", "inferred", "every tetrahedron a cell lists "
            "meets the closed cell box")
def _(run):
    _, ref_cell, ref_tet = run.fact(_listed)
    hit = run.fact(_compare)[0]
    return outcome_of(~hit, lambda r: f"cell {ref_cell[r]} lists tet {ref_tet[r]}, which does "
                                      f"not meet it",
                      "(cell, tet) references whose tetrahedron misses the cell box")


@GRID.check("sphere_reaches_cell_rate", "info", "how often a tetrahedron's stored sphere "
            "reaches the cell listing it")
def _(run):
    from ._kernels import Spheres, sphere_reach
    mesh = run.mesh
    _, ref_cell, ref_tet = run.fact(_listed)
    n = len(ref_tet)
    reach = 0
    if n:
        lo, hi = cell_bounds(np.arange(mesh.n_cells), mesh.bbox_min, mesh.cell_size,
                             mesh.dims)
        reach = int(sphere_reach(Spheres(ref_cell, ref_tet, run.records.tets, lo, hi,
                                         SPHERE_REACH_REL)))
    return Outcome(reach, n, f"tet sphere (centre, radius) reaches its listed cell in "
                             f"{100.0 * reach / n if n else 100.0:.1f} % of references")


@GRID.check("tet_listed_by_centre_cell", "inferred", "the cell holding a tetrahedron's "
            "vertex mean lists it")
def _(run):
    indptr = run.fact(_listed)[0]
    home, mean = run.fact(measures).home, run.fact(measures).mean
    return outcome_of(~run.fact(_compare)[3],
                      lambda t: f"tet {t} (vertex mean {fmt(mean[t])}) not listed by cell "
                                f"{home[t]}, which lists "
                                f"{int(indptr[home[t] + 1] - indptr[home[t]])} tets",
                      "tetrahedra missing from the cell holding their centre")


@GRID.check("grid_membership_exact", "inferred", "a cell lists exactly the tetrahedra that "
            "meet its closed box (the builder's rule)")
def _(run):
    _, missing, extra, _, dupes = run.fact(_compare)
    n_exp = len(run.fact(grid_pairs)[1])
    key = max(run.mesh.n_tets, 1)
    bits = []
    if len(missing):
        bits.append(listing(missing, lambda k: f"cell {k // key} lacks tet {k % key}",
                            "intersecting (cell, tet) pairs not listed"))
    if len(extra):
        bits.append(listing(extra, lambda k: f"cell {k // key} lists tet {k % key}",
                            "listed pairs that do not intersect"))
    if dupes:
        bits.append(f"{dupes} duplicate references")
    return Outcome(n_exp - len(missing), n_exp + len(extra) + dupes,
                   "; ".join(bits) if bits else
                   f"every cell lists exactly the {n_exp} (cell, tet) pairs that meet it")
