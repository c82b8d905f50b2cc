"""The boundary surface of the navigable volume, facing outward.

Every boundary face (listed by one tetrahedron) becomes a triangle wound so
its normal points away from its tetrahedron: out of the navigable volume —
into the asteroid holes, and out through the box walls. For a closed
boundary the surface's signed volume is then the navigable volume.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from ..errors import ExportError
from . import SURFACE_EXTS, extension, write_bytes


def boundary_triangles(mesh) -> np.ndarray:
    """(B,3) int64 triangles in *mesh* vertex indices, outward-facing."""
    faces = np.asarray(mesh.boundary_faces, dtype=np.int64)
    if len(faces) == 0:
        return np.zeros((0, 3), dtype=np.int64)
    tri = np.asarray(mesh.face_vertices, dtype=np.int64)[faces].copy()
    t, k = mesh.face_owner
    t, k = t[faces], k[faces]
    opp = mesh.tets[t, mesh.opposite_slot[t, k]]
    v = mesh.vertices
    a, b, c = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    n = np.cross(b - a, c - a)
    inward = np.einsum("ij,ij->i", n, a - v[opp]) < 0
    tri[inward] = tri[inward][:, [0, 2, 1]]
    return tri


def boundary_surface(mesh):
    """(vertices (S,3) float64, triangles (B,3) int64) of the boundary,
    compacted to the vertices it uses, normals pointing out of the navigable
    volume."""
    tri = boundary_triangles(mesh)
    used, inverse = np.unique(tri.ravel(), return_inverse=True)
    return (np.asarray(mesh.vertices, dtype=np.float64)[used],
            inverse.reshape(-1, 3).astype(np.int64))


def box_wall_mask(mesh, vertices, triangles, rel_tol=1e-6) -> np.ndarray:
    """(B,) bool: triangles lying on one of the box's six walls."""
    tol = rel_tol * float(np.max(mesh.bbox_max - mesh.bbox_min))
    p = vertices[triangles]                                     # (B,3,3)
    on = np.zeros(len(triangles), dtype=bool)
    for axis in range(3):
        for wall in (mesh.bbox_min[axis], mesh.bbox_max[axis]):
            on |= np.all(np.abs(p[:, :, axis] - wall) <= tol, axis=1)
    return on


def signed_volume(vertices, triangles) -> float:
    """Volume enclosed by a closed triangle surface (positive if outward)."""
    p = vertices[triangles]
    return float(np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0)


def _normals(vertices, triangles):
    p = vertices[triangles]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(ln > 0, ln, 1.0)


def obj_bytes(vertices, triangles, comment="") -> bytes:
    lines = [f"# {comment}"] if comment else []
    lines += [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(vertices, dtype=float).tolist()]
    lines += [f"f {a} {b} {c}" for a, b, c in (np.asarray(triangles) + 1).tolist()]
    return ("\n".join(lines) + "\n").encode()


def ply_bytes(vertices, triangles, comment="") -> bytes:
    head = ["ply", "format binary_little_endian 1.0"]
    if comment:
        head.append(f"comment {comment}")
    head += [f"element vertex {len(vertices)}", "property double x",
             "property double y", "property double z",
             f"element face {len(triangles)}", "property list uchar int vertex_indices",
             "end_header"]
    face = np.zeros(len(triangles), dtype=[("n", "u1"), ("v", "<i4", (3,))])
    face["n"] = 3
    face["v"] = triangles
    return (("\n".join(head) + "\n").encode()
            + np.asarray(vertices, dtype="<f8").tobytes() + face.tobytes())


def stl_bytes(vertices, triangles, comment="") -> bytes:
    rec = np.zeros(len(triangles), dtype=[("n", "<f4", (3,)), ("v", "<f4", (3, 3)),
                                          ("attr", "<u2")])
    rec["n"] = _normals(vertices, triangles)
    rec["v"] = vertices[triangles]
    header = ("regn " + comment).encode()[:80].ljust(80, b" ")
    return header + struct.pack("<I", len(triangles)) + rec.tobytes()


_WRITERS = {".obj": obj_bytes, ".ply": ply_bytes, ".stl": stl_bytes}


def write_surface(mesh, path) -> None:
    """Write the outward boundary surface to .obj / .ply / .stl, atomically."""
    ext = extension(path)
    if ext not in _WRITERS:
        raise ExportError(f"{os.fspath(path)}: unknown surface extension "
                          f"{ext or '(none)'}; use one of {' '.join(SURFACE_EXTS)}")
    v, t = boundary_surface(mesh)
    comment = f"boundary of {os.path.basename(str(mesh.path or 'mesh'))}: {len(t)} triangles"
    write_bytes(path, _WRITERS[ext](v, t, comment))
