"""Slow, obviously-right references for regn's compiled and vectorised work,
written from docs/format.md alone: plain Python loops over records read with
``struct`` at the offsets the document gives. Tests judge the library with
them; nothing here is fast or clever on purpose."""

import functools
import math
import struct
from types import SimpleNamespace

from regn.tolerances import DEGENERATE_REL, GEOM_REL, SPHERE_REACH_REL, TOUCH_REL, UNIT_TOL

NO_TET, NO_SLOT = 0xFFFFFFFF, 0xFF
ONE_BITS = struct.unpack(">I", struct.pack(">f", 1.0))[0]
# portal pair p joins face slots PAIRS[p]
PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))


# --- POF0 ---------------------------------------------------------------------------------

def pof0_walk(table, dialect):
    """Follow the entries from byte 0. -> (entries as (start, length,
    delta), end) where end is the first end byte or len(table); raises
    IndexError(start) when an entry runs past the table."""
    entries, pos = [], 0
    while pos < len(table):
        kind = table[pos] >> 6
        if kind == 0:
            return entries, pos
        length = (1, 2, dialect)[kind - 1]
        if pos + length > len(table):
            raise IndexError(pos)
        delta = table[pos] & 0x3F
        for k in range(1, length):
            delta = (delta << 8) | table[pos + k]
        entries.append((pos, length, delta))
        pos += length
    return entries, len(table)


def shortest_length(delta, dialect):
    return 1 if delta < 1 << 6 else (2 if delta < 1 << 14 else dialect)


def pof0_pack(words, dialect):
    """The canonical table of a set of words: ascending, shortest entries,
    zeros to a multiple of 4."""
    out, last = bytearray(), 0
    for w in sorted(set(words)):
        delta, last = w - last, w
        length = shortest_length(delta, dialect)
        kind = min(length, 3)
        entry = [(delta >> (8 * (length - 1 - k))) & 0xFF for k in range(length)]
        entry[0] |= kind << 6
        out += bytes(entry)
    return bytes(out + bytes(-len(out) % 4))


# --- an object's records ----------------------------------------------------------------

class Obj:
    """The records of one REGN object, read the plain way."""

    def __init__(self, data):
        size = struct.unpack_from(">I", data, 4)[0]
        o = ">" if data[0x10 + size:0x14 + size] == b"POF0" else "<"
        size = struct.unpack_from(o + "I", data, 4)[0]
        d0 = 0x10
        h = struct.unpack_from(o + "4f4f3fI3fI3II6HI6I2I", data, d0)
        self.bbox_min, self.bbox_max = h[0:3], h[4:7]
        self.cell = h[12:15]
        self.dims = h[16:19]
        counts, ptrs = h[20:26], h[27:33]

        def records(k, fmt, stride):
            return [struct.unpack_from(o + fmt, data, d0 + ptrs[k] + stride * i)
                    for i in range(counts[k])]
        self.vertices = records(0, "3f", 12)
        self.tets = [dict(centre=r[0:3], radius=r[3], verts=r[4:8], faces=r[8:12],
                          portal=[(r[12 + 2 * p], r[13 + 2 * p]) for p in range(6)])
                     for r in records(1, "3ff4H4H12f2I2I", 96)]
        self.faces = [dict(normal=r[0:3], d=r[3], point=r[4:7], w=r[7], own=r[8],
                           tet_a=r[9], tet_b=r[10], slot_a=r[11], slot_b=r[12], zero=r[13])
                      for r in records(2, "3ff3fIIIIBBH", 48)]
        cells = records(3, "II", 8)
        items = records(4, "4IIIII", 32)
        refs = records(5, "I", 4)
        # the grid as a query walks it: cell -> item -> n references -> tets
        # (a pointer inside a record names that record, as the reader has it)
        self.lists = []
        for _, item_ptr in cells:
            tets = []
            if item_ptr:
                _, _, _, _, n, refs_ptr, _, _ = items[(item_ptr - ptrs[4]) // 32]
                first = (refs_ptr - ptrs[5]) // 4
                tets = [(refs[first + j][0] - ptrs[1]) // 96 for j in range(n)]
            self.lists.append(tets)
        lo, hi = self.bbox_min, self.bbox_max
        self.tol = GEOM_REL * max(max(abs(x) for x in lo + hi),
                                  max(b - a for a, b in zip(lo, hi)), 1.0)

    def corners(self, t):
        return [self.vertices[v] for v in self.tets[t]["verts"]]

    def listers(self):
        """(tet, slot) pairs listing each face, in tetrahedron order."""
        out = [[] for _ in self.faces]
        for t, tet in enumerate(self.tets):
            for k, f in enumerate(tet["faces"]):
                out[f].append((t, k))
        return out


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


# Sums are taken in the order regn's kernels take them (numpy's einsum adds
# a dot product as (x0 y0 + x2 y2) + x1 y1, a squared length left to right), so
# that a value exactly on a threshold (a zero volume) lands on the same side.
def dot(a, b):
    return (a[0] * b[0] + a[2] * b[2]) + a[1] * b[1]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def plane_distances(obj, t, f):
    face = obj.faces[f]
    return [dot(face["normal"], v) + face["d"] for v in obj.corners(t)]


def farthest(dist):
    """The corner farthest from a plane (a NaN distance counts as farthest)."""
    for i, x in enumerate(dist):
        if x != x:
            return i
    return max(range(4), key=lambda i: abs(dist[i]))


def volume(p):
    return dot(cross(sub(p[1], p[0]), sub(p[2], p[0])), sub(p[3], p[0])) / 6


def mean(p):
    return [(p[0][e] + p[1][e] + p[2][e] + p[3][e]) / 4 for e in range(3)]


def home_cell(obj, x):
    ijk = [min(max(math.floor((x[e] - obj.bbox_min[e]) / obj.cell[e]), 0), obj.dims[e] - 1)
           for e in range(3)]
    return (ijk[2] * obj.dims[1] + ijk[1]) * obj.dims[0] + ijk[0]


def cell_box(obj, c):
    nx, ny, _ = obj.dims
    ijk = (c % nx, c // nx % ny, c // (nx * ny))
    lo = [obj.bbox_min[e] + ijk[e] * obj.cell[e] for e in range(3)]
    return lo, [lo[e] + obj.cell[e] for e in range(3)]


# --- the checks, each a list of failing records (and a total) ---------------------------

def face_checks(obj):
    """name -> (failing face indices, total)."""
    listers = obj.listers()
    out = {name: [] for name in ("face_normals_unit", "face_point_on_plane", "face_w_one",
                                 "face_own_index", "face_tet_a_slot",
                                 "faces_listed_once_or_twice", "face_tet_b_slot",
                                 "face_zero_field")}
    for f, face in enumerate(obj.faces):
        n = face["normal"]
        fails = {
            "face_normals_unit": not abs(norm(n) - 1) <= UNIT_TOL,
            "face_point_on_plane": not abs(dot(n, face["point"]) + face["d"]) <= obj.tol,
            "face_w_one": face["w"] != ONE_BITS,
            "face_own_index": face["own"] != f,
            "face_tet_a_slot": obj.tets[face["tet_a"]]["faces"][face["slot_a"]] != f,
            "faces_listed_once_or_twice": len(listers[f]) not in (1, 2),
            "face_zero_field": face["zero"] != 0,
        }
        b = (face["tet_b"], face["slot_b"])
        if len(listers[f]) == 1:
            fails["face_tet_b_slot"] = b != (NO_TET, NO_SLOT)
        elif len(listers[f]) == 2:
            first, second = listers[f]
            fails["face_tet_b_slot"] = b != (second if first == (face["tet_a"],
                                                                   face["slot_a"]) else first)
        for name, bad in fails.items():
            if bad:
                out[name].append(f)
    return {name: (bad, len(obj.faces)) for name, bad in out.items()}


def tet_checks(obj):
    """name -> (failing records, total): tetrahedra, (tet, slot) pairs as
    4 t + k, faces, or (tet, pair) as 6 t + p."""
    listed = [len(x) for x in obj.listers()]
    out = {name: [] for name in ("tet_volume_nonzero", "tet_orientation_positive",
                                 "face_plane_through_tet", "tet_centre_radius",
                                 "portal_cost_rule")}
    off_plane = {}              # (t, k) -> n.v + d at the corner off face slot k
    for t, tet in enumerate(obj.tets):
        p = obj.corners(t)
        vol = volume(p)
        size = max(max(v[e] for v in p) - min(v[e] for v in p) for e in range(3))
        if not abs(vol) > DEGENERATE_REL * size ** 3:
            out["tet_volume_nonzero"].append(t)
        if not vol > 0:
            out["tet_orientation_positive"].append(t)
        centroids = []
        for k, f in enumerate(tet["faces"]):
            dist = plane_distances(obj, t, f)
            if sum(abs(x) <= obj.tol for x in dist) < 3:
                out["face_plane_through_tet"].append(4 * t + k)
            far = farthest(dist)
            off_plane[t, k] = dist[far]
            on = [p[v] for v in range(4) if v != far]
            centroids.append([(on[0][e] + on[1][e] + on[2][e]) / 3 for e in range(3)])
        m = mean(p)
        spread = max(norm(sub(v, m)) for v in p)
        if not (norm(sub(tet["centre"], m)) <= obj.tol
                and abs(tet["radius"] - spread) <= obj.tol):
            out["tet_centre_radius"].append(t)
        for q, (i, j) in enumerate(PAIRS):
            want = norm(sub(centroids[i], centroids[j]))
            boundary = listed[tet["faces"][i]] == 1 or listed[tet["faces"][j]] == 1
            cost, aux = tet["portal"][q]
            if not (abs(cost - want) <= obj.tol
                    and abs(aux - (0.0 if boundary else want)) <= obj.tol):
                out["portal_cost_rule"].append(6 * t + q)
    n_t = len(obj.tets)
    totals = {"face_plane_through_tet": 4 * n_t, "portal_cost_rule": 6 * n_t}
    result = {name: (bad, totals.get(name, n_t)) for name, bad in out.items()}
    outward = [f for f, face in enumerate(obj.faces)
               if not off_plane[face["tet_a"], face["slot_a"]] < 0]
    result["face_normal_out_of_a"] = (outward, len(obj.faces))
    return result


# --- the grid rule -------------------------------------------------------------------------

def membership(obj):
    """Every (cell, tet) pair whose closed cell box the tetrahedron meets, by
    the full separating-axis test on every pair (tests/geometry_reference.py)."""
    corners = [tuple(obj.corners(t)) for t in range(len(obj.tets))]
    met = _cells_met(corners, obj.bbox_min, obj.cell, obj.dims)
    return {(c, t) for t, cells in enumerate(met) for c in cells}


@functools.lru_cache(maxsize=16)
def _seen(bbox_min, cell, dims):
    """A grid's {a tetrahedron's corners: the cells it meets}: corrupted
    copies of one object share most of their tetrahedra."""
    return {}


def _cells_met(corners, bbox_min, cell, dims):
    """The cells each tetrahedron (given by its corners) meets on the grid:
    the ones not seen on this grid before tested against every cell."""
    import numpy as np
    from geometry_reference import tets_intersect_boxes
    seen = _seen(bbox_min, cell, dims)
    met = [seen.get(c) for c in corners]
    todo = [t for t, cells in enumerate(met) if cells is None]
    if todo:
        obj = SimpleNamespace(bbox_min=bbox_min, cell=cell, dims=dims)
        n_cells = dims[0] * dims[1] * dims[2]
        boxes = np.array([cell_box(obj, c) for c in range(n_cells)])        # (C,2,3)
        cells, tets = np.repeat(np.arange(n_cells), len(todo)), np.tile(todo, n_cells)
        eps = TOUCH_REL * max(c * n for c, n in zip(cell, dims))
        meets = tets_intersect_boxes(np.array(corners)[tets], boxes[cells, 0],
                                     boxes[cells, 1], eps)
        for t in todo:
            met[t] = []
        for c, t in zip(cells[meets].tolist(), tets[meets].tolist()):
            met[t].append(c)
        for t in todo:
            seen[corners[t]] = met[t]
    return met


def grid_checks(obj, expected):
    """name -> (passed, total) of the grid rule's checks, with ``expected``
    the pairs :func:`membership` gives."""
    listed = [(c, t) for c, tets in enumerate(obj.lists) for t in tets]
    unique = set(listed)
    reach = 0
    for c, t in listed:
        lo, hi = cell_box(obj, c)
        centre, radius = obj.tets[t]["centre"], obj.tets[t]["radius"]
        nearest = [min(max(x, a), b) for x, a, b in zip(centre, lo, hi)]
        reach += norm(sub(centre, nearest)) <= radius * (1 + SPHERE_REACH_REL)
    homes = [home_cell(obj, mean(obj.corners(t))) for t in range(len(obj.tets))]
    return {"listed_tets_intersect_cell": (sum(x in expected for x in listed), len(listed)),
            "sphere_reaches_cell_rate": (reach, len(listed)),
            "tet_listed_by_centre_cell": (sum((homes[t], t) in unique
                                              for t in range(len(obj.tets))), len(obj.tets)),
            "grid_membership_exact": (len(expected & unique),
                                      len(expected) + len(unique - expected)
                                      + len(listed) - len(unique))}
