"""Drop the fewest tetrahedra that make a mesh's boundary a closed 2-manifold.

Culling the tetrahedra that meet an obstacle can leave free tetrahedra that
touch only along an edge or at a vertex, across culled space: pinches (see
:mod:`regn.geometry.manifold`). Each round finds them and drops, around each
one, the tetrahedra that hold it (the *star* of the edge or vertex):

* a star made of several groups (tetrahedra joined through shared faces):
  every group but the largest by volume;
* a vertex whose star is one group, yet whose boundary triangles form two
  fans (the free space wraps around the vertex like a ring between two
  obstacles): the lightest chain of tetrahedra, joined through faces, that
  runs from one fan to the other. Cutting the ring there leaves one fan.

A drop can pinch a neighbour; the rounds go on until nothing is pinched.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..errors import BuildError
from ..geometry.graph import components_of_pairs, tet_components
from ..geometry.manifold import pinches
from ..geometry.tets import (FACE_SLOTS, boundary_face_slots, face_keys, signed_volumes,
                             tets_by_vertex)

#: Rounds before giving up (each removes at least one tetrahedron; a few
#: rounds are usual).
MAX_ROUNDS = 200


def _lesser_groups(star, tets, vol):
    """The tetrahedra of ``star`` outside its largest (by volume) group
    joined through shared faces; empty when the star is one group."""
    n, label = tet_components(tets[star])
    if n <= 1:
        return star[:0]
    keep = np.argmax(np.bincount(label, weights=vol[star], minlength=n))
    return star[label != keep]


def _fan_ends(v, star, tets, boundary):
    """For a vertex whose star is one group: (from, to) bool masks over
    ``star``, the tetrahedra with a boundary face at ``v`` in the first fan,
    and in any other fan. A fan is a cycle of boundary edges of v's link."""
    rows, edges = [], []
    for i, t in enumerate(star):
        for k in np.flatnonzero(boundary[t] & (tets[t] != v)):
            ab = [x for x in tets[t, FACE_SLOTS[k]] if x != v]
            rows.append(i)
            edges.append(ab)
    edges = np.asarray(edges, np.int64).reshape(-1, 2)
    link_v, local = np.unique(edges, return_inverse=True)
    local = local.reshape(-1, 2)
    _, cycle = components_of_pairs(len(link_v), local[:, 0], local[:, 1])
    fan = cycle[local[:, 0]]
    rows = np.asarray(rows, np.int64)
    start = np.zeros(len(star), bool)
    end = np.zeros(len(star), bool)
    start[rows[fan == fan[0]]] = True
    end[rows[fan != fan[0]]] = True
    return start, end


def _lightest_chain(star, tets, vol, start, end):
    """The tetrahedra of ``star`` on the lightest (by volume) chain joined
    through shared faces from a ``start`` tetrahedron to an ``end`` one."""
    keys = face_keys(tets[star])
    order = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    a, b = order[same] // 4, order[same + 1] // 4
    neighbours = [[] for _ in star]
    for x, y in zip(a.tolist(), b.tolist()):
        neighbours[x].append(y)
        neighbours[y].append(x)
    w = vol[star]
    best = np.full(len(star), np.inf)
    came = np.full(len(star), -1)
    heap = []
    for i in np.flatnonzero(start):
        best[i] = w[i]
        heapq.heappush(heap, (w[i], int(i)))
    while heap:
        d, i = heapq.heappop(heap)
        if d > best[i]:
            continue
        if end[i]:
            chain = [i]
            while came[chain[-1]] >= 0:
                chain.append(int(came[chain[-1]]))
            return star[chain]
        for j in neighbours[i]:
            if d + w[j] < best[j]:
                best[j] = d + w[j]
                came[j] = i
                heapq.heappush(heap, (best[j], j))
    return star                      # the fans are not linked: drop the whole star


def _pinch_drops(tets, vol, found, n_vertices):
    """(T,) bool: the tetrahedra one round drops (see the module docstring)."""
    order, start = tets_by_vertex(tets, n_vertices)
    boundary = boundary_face_slots(tets)
    drop = np.zeros(len(tets), bool)
    for u, w in found.edges:
        around_u = order[start[u]:start[u + 1]]
        star = around_u[np.any(tets[around_u] == w, axis=1)]
        drop[_lesser_groups(star, tets, vol)] = True
    for v in found.vertices:
        star = order[start[v]:start[v + 1]]
        lesser = _lesser_groups(star, tets, vol)
        if len(lesser):
            drop[lesser] = True
        else:
            drop[_lightest_chain(star, tets, vol, *_fan_ends(v, star, tets, boundary))] = True
    return drop


def unpinch(pts, tets):
    """``(tets, dropped)``: ``tets`` (T,4) over the points ``pts`` (V,3)
    without the tetrahedra that pinch its boundary (see the module
    docstring), and how many were dropped."""
    tets = np.asarray(tets, np.int64)
    vol = np.abs(signed_volumes(np.asarray(pts, np.float64)[tets]))
    dropped = 0
    for _ in range(MAX_ROUNDS):
        found = pinches(tets)
        if not len(found.edges) and not len(found.vertices):
            return tets, dropped
        drop = _pinch_drops(tets, vol, found, len(pts))
        tets, vol = tets[~drop], vol[~drop]
        dropped += int(drop.sum())
    raise BuildError(f"the boundary is still pinched after {MAX_ROUNDS} rounds of repair")
