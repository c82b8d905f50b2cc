"""Compiled kernel of the nesting rule (``cavities="nested"``): how many
triangles of a soup an axis-parallel segment crosses, mod 2."""

from __future__ import annotations

import numpy as np

from .._jit import kernel, prange


@kernel(inline=True)
def _crossing(pu, pv, au, av, bu, bv, cu, cv):
    """``(hit, wa, wb, wc)``: whether the point ``(pu, pv)`` lies inside the
    triangle ``abc`` projected on the plane of the two other axes, with its
    barycentric weights (a triangle seen edge-on is never hit)."""
    det = (bu - au) * (cv - av) - (cu - au) * (bv - av)
    if det == 0.0:
        return False, 0.0, 0.0, 0.0
    wb = ((pu - au) * (cv - av) - (cu - au) * (pv - av)) / det
    wc = ((bu - au) * (pv - av) - (pu - au) * (bv - av)) / det
    wa = 1.0 - wb - wc
    return wa >= 0.0 and wb >= 0.0 and wc >= 0.0, wa, wb, wc


@kernel(parallel=True)
def segment_parities(verts, tris, starts, axes, ends):
    """``(S,)`` uint8: the parity of the number of triangles crossed by each
    segment from ``starts[s]`` along axis ``axes[s]`` to the coordinate
    ``ends[s]`` on that axis (a triangle the segment only runs along, seen
    edge-on, is not crossed)."""
    out = np.zeros(starts.shape[0], np.uint8)
    for s in prange(starts.shape[0]):
        ax = axes[s]
        u, v = (ax + 1) % 3, (ax + 2) % 3
        pu, pv = starts[s, u], starts[s, v]
        a0, a1 = min(starts[s, ax], ends[s]), max(starts[s, ax], ends[s])
        odd = 0
        for t in range(tris.shape[0]):
            a, b, c = tris[t, 0], tris[t, 1], tris[t, 2]
            if max(verts[a, ax], max(verts[b, ax], verts[c, ax])) < a0 or \
                    min(verts[a, ax], min(verts[b, ax], verts[c, ax])) > a1:
                continue
            if max(verts[a, u], max(verts[b, u], verts[c, u])) < pu or \
                    min(verts[a, u], min(verts[b, u], verts[c, u])) > pu:
                continue
            if max(verts[a, v], max(verts[b, v], verts[c, v])) < pv or \
                    min(verts[a, v], min(verts[b, v], verts[c, v])) > pv:
                continue
            hit, wa, wb, wc = _crossing(pu, pv, verts[a, u], verts[a, v], verts[b, u],
                                        verts[b, v], verts[c, u], verts[c, v])
            if hit:
                at = wa * verts[a, ax] + wb * verts[b, ax] + wc * verts[c, ax]
                if a0 < at < a1:
                    odd ^= 1
        out[s] = odd
    return out
