"""The same mesh as another tool would write it.

Every [seed] statement of docs/format.md still holds, but none of regn's
[inferred] conventions need to: vertices, tetrahedra and faces are numbered
in another order, each tetrahedron lists its vertices and its face slots in
its own order (so slot k is no longer the face opposite vertex k), a face's A
and B may be swapped, its plane may be stored the other way round (n and d
negated), and each cell lists its tetrahedra in another order. The portal
costs follow their face slots (the (cost, aux) of a pair of faces is the
same pair of faces' in the other slots), so a tool that agrees with regn on
what a crossing costs stores the same costs.

``orient=False`` keeps the two conventions verify can see on a permuted
mesh -- positive signed volumes (the vertex order is permuted evenly) and
normals out of tetrahedron A -- so that strict verify must give the same
verdict; with ``orient=True`` those two checks may fail
(:data:`CONVENTION_CHECKS`) and nothing else may change.
"""

from __future__ import annotations

from itertools import permutations
from typing import NamedTuple

import numpy as np

import regn
from regn.format.layout import NO_SLOT, NO_TET, PORTAL_PAIRS
from regn.mesh import Mesh

#: The verify checks about a convention the permutation breaks when it
#: orients tetrahedra and faces its own way.
CONVENTION_CHECKS = frozenset({"tet_orientation_positive", "face_normal_out_of_a"})

_ORDERS = np.array(list(permutations(range(4))))
_EVEN = np.array([p for p in _ORDERS
                  if sum(p[i] > p[j] for i in range(4) for j in range(i + 1, 4)) % 2 == 0])
#: (4,4) the portal pair index of face slots (i, j), -1 on the diagonal.
_PAIR = np.full((4, 4), -1)
for _q, (_i, _j) in enumerate(PORTAL_PAIRS):
    _PAIR[_i, _j] = _PAIR[_j, _i] = _q


class Renumbered(NamedTuple):
    """The other tool's mesh and where each of the original's records went:
    ``vertex[v]``, ``tet[t]``, ``face[f]`` the new index of old record v, t,
    f; ``vertex_slot[t, j]`` the old vertex slot of new slot j of the old
    tetrahedron t, ``face_slot[t, j]`` likewise for its face slots."""

    mesh: Mesh
    vertex: np.ndarray
    tet: np.ndarray
    face: np.ndarray
    vertex_slot: np.ndarray
    face_slot: np.ndarray


def as_other_tool(mesh, seed=0, *, orient=True) -> Renumbered:
    """``mesh`` renumbered and reordered as described in the module
    docstring (deterministic from ``seed``), written and read back."""
    rng = np.random.default_rng(seed)
    src = {name: np.array(arr) for name, arr in mesh.sections.items()}
    n_v, n_t, n_f = mesh.n_vertices, mesh.n_tets, mesh.n_faces
    new_v, new_t, new_f = rng.permutation(n_v), rng.permutation(n_t), rng.permutation(n_f)
    rows = np.arange(n_t)[:, None]
    vertex_slot = (_ORDERS if orient else _EVEN)[rng.integers(0, 24 if orient else 12, n_t)]
    face_slot = _ORDERS[rng.integers(0, 24, n_t)]
    new_slot_of = np.argsort(face_slot, axis=1)             # old face slot -> new slot

    vertices = np.empty_like(src["vertices"])
    vertices[new_v] = src["vertices"]

    tets = src["tets"].copy()
    tets["verts"] = new_v[src["tets"]["verts"][rows, vertex_slot]]
    tets["faces"] = new_f[src["tets"]["faces"][rows, face_slot]]
    pairs = np.array(PORTAL_PAIRS)
    tets["portal"] = src["tets"]["portal"][rows, _PAIR[face_slot[:, pairs[:, 0]],
                                                       face_slot[:, pairs[:, 1]]]]
    out_tets = np.empty_like(tets)
    out_tets[new_t] = tets

    faces = src["faces"].copy()
    a, b = faces["tet_a"].astype(np.int64), faces["tet_b"].astype(np.int64)
    inner = b != NO_TET
    faces["tet_a"] = new_t[a]
    faces["slot_a"] = new_slot_of[a, faces["slot_a"]]
    faces["tet_b"][inner] = new_t[b[inner]]
    faces["slot_b"][inner] = new_slot_of[b[inner], faces["slot_b"][inner]]
    if orient:
        swap = inner & (rng.random(n_f) < 0.5)
        for x, y in (("tet_a", "tet_b"), ("slot_a", "slot_b")):
            faces[x][swap], faces[y][swap] = faces[y][swap], faces[x][swap].copy()
        flip = rng.random(n_f) < 0.5
        faces["normal"][flip] = -faces["normal"][flip]
        faces["d"][flip] = -faces["d"][flip]
    out_faces = np.empty_like(faces)
    out_faces[new_f] = faces
    out_faces["own"] = np.arange(n_f)

    # each cell's references in another order (items keep theirs: [seed])
    ref_tet = new_t[np.asarray(mesh.ref_tet)]
    item_of_ref = np.repeat(np.arange(mesh.n_items), src["items"]["n"].astype(np.int64))
    ref_tet = ref_tet[np.lexsort((rng.random(len(ref_tet)), item_of_ref))]

    sections = dict(src, vertices=vertices, tets=out_tets, faces=out_faces)
    other = Mesh(header=mesh.header, sections=sections, cell_item=mesh.cell_item,
                 item_ref_start=mesh.item_ref_start, ref_tet=ref_tet,
                 byte_order=mesh.byte_order, pof0_dialect=mesh.pof0_dialect)
    return Renumbered(regn.loads(other.dumps()), new_v, new_t, new_f, vertex_slot,
                      face_slot)
