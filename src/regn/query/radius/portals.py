"""Paths for agents of every size: a sphere of radius r that never touches
a wall, on the same mesh and the same search as a point's paths.

Witnesses. Each portal face gets a *witness*: a point of the face, strictly
inside it, chosen to be far from the walls (the best of four fixed points
of the face, then three steps uphill, away from the nearest wall point; each
point's distance to the walls is exact). The portal's *clearance* is its
witness's distance to the nearest wall; computed once per mesh and cached
(:func:`portal_clearance`). An edge of the search graph (crossing a
tetrahedron from one portal to another) has the clearance of the segment
joining the two witnesses (its exact distance to every wall triangle,
through the wall BVH). It is bounded from the start (between the two
witnesses' clearances and their mean less half the segment's length: the
distance to the walls is 1-Lipschitz) and measured only where those bounds
do not settle a radius that is asked for.

The search for radius r runs the ordinary search
(:mod:`regn.query.paths.path`: same costs, same bidirectional A*) on the graph
without the edges whose clearance is below r (a masked copy of the edge
table, cached per radius), from links s -> witness of each portal of the
start's tetrahedron that keep r (and the same at the goal). So the
polyline s, each portal's witness, g keeps r: the search finds the
cheapest corridor whose witness polyline keeps r, and it always has one
valid answer. The smoother then shortens that polyline inside the
corridor without giving up r (:mod:`regn.query.radius.keep_clear`).

"Keeps r" means at least ``r + CLEARANCE_MARGIN_REL * max(r, box scale)``
from every wall (:data:`regn.tolerances.CLEARANCE_MARGIN_REL`), so rounding
never takes a path below r.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, namedtuple

import numpy as np

from ...errors import QueryError
from ...status import NAMES, OK, TOO_NARROW, UNREACHABLE
from ...tolerances import CLEARANCE_MARGIN_REL
from ..common import as_radius, scratch

#: The mesh's clearance structures, in the search graph's internal face
#: numbering (:func:`portal_clearance`).
PortalClearance = namedtuple("PortalClearance", [
    "witness",         # (F+1,3) each portal's witness point (walls and row F: NaN)
    "clearance",       # (F+1,) the witness's distance to the nearest wall (walls: -1)
    "edge_lo",         # (F+1,6) each edge's witness segment's clearance is at least
    "edge_hi",         # ... this and at most this (settled per radius; -1: no edge)
])

#: uphill steps from the best candidate witness (see _portal_kernels)
_ASCENT_STEPS = 3
#: a witness keeps this barycentric margin from its face's edges, so the
#: smoother can start from it (strictly inside)
_WITNESS_MIN_BARY = 1e-3
#: radii whose masked graphs stay cached per mesh
_RADIUS_GRAPHS = 8


def _kernels():
    from . import _portal_kernels
    return _portal_kernels


def margin_radius(mesh, radius) -> float:
    """The clearance a path for ``radius`` keeps: radius plus the margin."""
    scale = float(max(np.abs(mesh.bbox_min).max(), np.abs(mesh.bbox_max).max()))
    if not np.isfinite(scale):
        scale = 0.0
    return radius + CLEARANCE_MARGIN_REL * max(radius, scale)


def portal_clearance(mesh) -> PortalClearance:
    """The witnesses and clearances of the mesh's portals, and the bounds of
    its search edges' clearances (cached; see the module docstring)."""
    s = scratch(mesh)
    if "portal_clearance" in s:
        return s["portal_clearance"]
    from ..walls.nearest import _wall_bvh
    from ..paths.path import _graph
    graph = _graph(mesh)["graph"]
    F = len(graph.face_order)
    witness = np.full((F + 1, 3), np.nan)
    clear = np.full(F + 1, -1.0)
    bvh = _wall_bvh(mesh)
    portal = np.flatnonzero(graph.is_portal)             # internal numbering
    if bvh is not None and len(portal):
        faces = graph.face_order[portal]
        tri = _by_position(np.asarray(mesh.vertices)[np.asarray(mesh.face_vertices)[faces]])
        w, d = np.empty((len(portal), 3)), np.empty(len(portal))
        _kernels().portal_witnesses(bvh, np.ascontiguousarray(tri.reshape(-1, 9)),
                                    _ASCENT_STEPS, _WITNESS_MIN_BARY, w, d)
        witness[portal], clear[portal] = w, d
    lo, hi = _edge_bounds(graph, witness, clear)
    out = PortalClearance(witness, clear, lo, hi)
    s["portal_clearance"] = out
    return out


def _by_position(tri):
    """(P,3,3) triangles with their corners in lexicographic order of
    (x, y, z): the witness search starts from a corner, so a face's witness
    must not depend on the order another tool lists its vertices in."""
    key = np.lexsort((tri[:, :, 2], tri[:, :, 1], tri[:, :, 0]), axis=-1)
    return np.take_along_axis(tri, key[:, :, None], axis=1)


def _edge_bounds(graph, witness, clear):
    """(lo, hi) (F+1,6): bounds of each passable edge's witness-segment
    clearance (-1 where there is no passable edge): at most the smaller end
    clearance, at least their mean less half the segment's length."""
    F = len(graph.face_order)
    dst = graph.edge_int[:F, 1:12:2]
    has = (dst < F) & (graph.edge[:F, 0:12:2] >= 0)
    v = np.where(has, dst, F)
    cf, cv = clear[:F, None], clear[v]
    length = np.linalg.norm(witness[v] - witness[:F, None], axis=2)
    with np.errstate(invalid="ignore"):
        hi = np.where(has, np.minimum(cf, cv), -1.0)
        lo = np.where(has, np.clip(0.5 * (cf + cv - length), 0.0, np.maximum(hi, 0.0)), -1.0)
    lo, hi = np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=0.0)
    pad = np.full((1, 6), -1.0)
    return np.vstack([lo, pad]), np.vstack([hi, pad])


#: A search graph's edge table masked for one radius, and the walls near
#: each tetrahedron for it (:func:`radius_graph`).
RadiusGraph = namedtuple("RadiusGraph", ["edge", "edge_int", "near", "arena"])


def radius_graph(mesh, r_eff) -> RadiusGraph:
    """The :class:`RadiusGraph` for paths keeping ``r_eff``, cached for the
    last few radii. ``edge`` / ``edge_int``: the edge table of
    :mod:`regn.query.paths.path`'s search graph without the edges whose clearance
    is below r_eff (a search uses them in place of its slot's; the face
    rows are the slot's own); a tetrahedron that lost an edge also loses
    the search's no-turning-back shortcut (its costs, masked, need not obey
    the triangle inequality). ``near``: (start, walls), for each
    tetrahedron the wall triangles (rows of the wall BVH) that may come
    within r_eff of it, which the smoother keeps away."""
    s = scratch(mesh)
    with s.setdefault("radius_lock", threading.Lock()):
        cache = s.setdefault("radius_graphs", OrderedDict())
        if r_eff not in cache:
            cache[r_eff] = _masked(mesh, r_eff)
            while len(cache) > _RADIUS_GRAPHS:
                cache.popitem(last=False)
        cache.move_to_end(r_eff)
        return cache[r_eff]


def _masked(mesh, r_eff) -> RadiusGraph:
    from ..walls.nearest import _wall_bvh
    from ..paths.path import _Arena, _graph, _kernels as path_kernels
    base = _graph(mesh)["graph"]
    K = path_kernels()
    pc = portal_clearance(mesh)
    bvh = _wall_bvh(mesh)
    if bvh is not None:
        _kernels().refine_edges(bvh, base.edge, base.edge_int, pc.witness, pc.edge_lo,
                                pc.edge_hi, r_eff)
    arena = _Arena([("edge", base.edge_int.shape, np.int32)])
    edge_int = arena["edge"]
    edge_int[:] = base.edge_int
    edge = edge_int.view(np.float32)
    closed = (base.edge[:, 0:12:2] >= 0) & ~(pc.edge_lo >= r_eff)
    cost = edge[:, 0:12:2]
    cost[closed] = -1.0
    # tetrahedra that lost an edge: no shortcut through them any more
    f, k = np.nonzero(closed)
    lost = np.zeros(len(base.tet_faces) + 1, dtype=bool)
    lost[edge_int[f, K.ET0 + k // 3]] = True
    lost[-1] = False                     # (-1: no tetrahedron)
    t0, t1 = edge_int[:, K.ET0], edge_int[:, K.ET1]
    keep = np.where(lost[t0], 0, 1) | np.where(lost[t1], 0, 2)
    edge_int[:, K.EPRUNE] &= keep.astype(np.int32)
    near = (np.zeros(len(base.tet_faces) + 1, np.int64), np.zeros(0, np.int64))
    if bvh is not None:
        from ._keep_clear_kernels import walls_near_tets
        near = walls_near_tets(bvh, np.ascontiguousarray(mesh.tet_points, dtype=np.float64),
                               r_eff)
    return RadiusGraph(edge, edge_int, near, arena)


def find_path_radius(mesh, start, goal, radius, smooth=True, cost_scale=None,
                     exclude=None, filter=None):
    """:func:`regn.query.paths.path.find_path` for a sphere of ``radius`` > 0 (see
    the module docstring)."""
    from ..paths.path import cost_options, find_path, path_ends, search_slot
    ends = path_ends(start, goal)
    radius = as_radius(radius)
    scale, excl = cost_options(mesh, cost_scale, exclude, filter)
    rs = radius_search(mesh, radius, scale, excl)
    if rs is None:                       # no walls: every point is infinitely far from one
        return find_path(mesh, start, goal, smooth, cost_scale, exclude, filter)
    with search_slot(rs.g) as slot:
        return radius_route(mesh, rs, slot, ends, smooth)



def find_paths_radius(mesh, starts, goals, radius, *, smooth=True, cost_scale=None,
                      exclude=None, filter=None, workers=None):
    """:func:`find_path_radius` for (N,3) starts and goals, on ``workers``
    threads: a :class:`regn.query.paths.batch.Paths`. The masked graph and the
    clearances are built before the threads start; each query is
    :func:`radius_route` in its thread's slot."""
    from ..paths.batch import Paths, find_paths, pair_ends, run_routes
    from ..paths.path import cost_options
    ends = pair_ends(starts, goals)
    radius = as_radius(radius)
    scale, excl = cost_options(mesh, cost_scale, exclude, filter)
    rs = radius_search(mesh, radius, scale, excl) if mesh.n_tets else None
    if rs is None:                       # no walls (or no mesh): a point's paths
        return find_paths(mesh, starts, goals, smooth=smooth, cost_scale=cost_scale,
                          exclude=exclude, filter=filter, workers=workers)

    def plan(_g):
        return lambda slot, pair: radius_route(mesh, rs, slot, pair, smooth, False)
    return Paths.of(run_routes(mesh, ends, plan, workers))

#: What every search for one radius and one set of options reads
#: (:func:`radius_search`).
RadiusSearch = namedtuple("RadiusSearch", [
    "g", "options",    # the search state (regn.query.paths.path._graph) and SearchOptions
    "bvh", "pc",       # the wall BVH and the PortalClearance
    "masked",          # the RadiusGraph
    "radius", "r_eff",  # the radius asked for, and with its margin
])


def radius_search(mesh, radius, scale, excl):
    """The :class:`RadiusSearch` for ``radius`` > 0 and validated cost
    options (:func:`regn.query.paths.path.cost_options`), every cache it reads
    built; None for a mesh without walls (every path keeps any radius).
    Without options, the last radius's is kept (a loop of queries for one
    agent size finds it at once)."""
    s = scratch(mesh)
    plain = scale is None and excl is None
    last = s.get("radius_search")
    if plain and last is not None and last[0] == radius:
        return last[1]
    from ..walls.nearest import _wall_bvh
    from ..paths.path import _graph, search_options
    bvh = _wall_bvh(mesh) if mesh.n_tets else None
    if bvh is None:
        return None
    g = _graph(mesh)
    r_eff = margin_radius(mesh, radius)
    rs = RadiusSearch(g, search_options(g, scale, excl), bvh, portal_clearance(mesh),
                      radius_graph(mesh, r_eff), radius, r_eff)
    if plain:
        s["radius_search"] = (radius, rs)
    return rs


def radius_route(mesh, rs, slot, ends, smooth=True, count=True):
    """One path for :class:`RadiusSearch` ``rs`` between ``ends`` (2,3),
    searched in ``slot`` (:func:`regn.query.paths.path.search_slot`) on the graph
    masked for the radius: a :class:`regn.query.paths.path.Path`."""
    from ..paths.path import (Path, _kernels as path_kernels, count_search, next_query_id, search)
    from ..paths.path import slot_state
    masked, options = rs.masked, rs.options
    if count:                                # (see regn.query.paths.path.search)
        count_search(rs.g)
    slot_state(rs.g, slot)                   # (the slot's graph with the landmark table)
    args = (slot.graph._replace(edge=masked.edge, edge_int=masked.edge_int), rs.g["tables"],
            slot.work, rs.bvh, rs.pc.witness, rs.pc.clearance,
            np.ascontiguousarray(ends, np.float64), options.scale, options.excl,
            bool(options.plain), float(options.hw), float(options.lw),
            int(next_query_id(slot)), float(rs.r_eff), np.zeros((2, 4), dtype=np.bool_))
    if "radius_search" not in rs.g:      # (numba's type dispatch would cost ~30 us a call)
        from ..._jit import entry_point
        rs.g["radius_search"] = entry_point(_kernels().find_path_radius, args)
    status, cost, n, _ = rs.g["radius_search"](*args)
    work = slot.work
    if status == path_kernels().BROKEN_CHAIN:
        raise QueryError("internal error: broken path chain")
    if status == TOO_NARROW:
        # a point's search tells "too narrow" from "no route at all"
        point = search(rs.g, slot, options, ends[0], ends[1], False, count)
        return Path(False, NAMES[TOO_NARROW if point.status == OK else UNREACHABLE])
    if status != OK:
        return Path(False, NAMES[status])
    portals = work.portals[:n].copy()
    corridor = work.corridor[:n + 1].copy()
    points = work.points[:n + 2].copy()
    if smooth and n:
        from .keep_clear import smooth_keeping
        points = smooth_keeping(mesh, ends, corridor, portals, points, rs.radius, rs.r_eff,
                                masked.near)
        if len(points) > 2:         # the corridor's bends in open space (regn.query.paths.taut)
            from ..paths.taut import sphere_sight, taut_points
            points = taut_points(points, sphere_sight(mesh, 0.5 * (rs.radius + rs.r_eff)))
    seg = points[1:] - points[:-1]
    length = float(np.sqrt(np.einsum("ij,ij->i", seg, seg)).sum())
    return Path(True, NAMES[OK], float(cost), corridor, portals, points, length)
