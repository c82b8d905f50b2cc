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
from ._files import SURFACE_EXTS, extension, temp_path, unit_scale, write_bytes


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


#: Names of the box's six walls, in the order of :func:`box_wall_index`.
WALL_NAMES = ("box_xmin", "box_xmax", "box_ymin", "box_ymax", "box_zmin", "box_zmax")


def box_wall_index(mesh, vertices, triangles, rel_tol=1e-6) -> np.ndarray:
    """(B,) int64: the wall (index into :data:`WALL_NAMES`) each triangle lies
    on, -1 for a triangle on no wall (an asteroid's)."""
    tol = rel_tol * float(np.max(mesh.bbox_max - mesh.bbox_min))
    p = vertices[triangles]                                     # (B,3,3)
    wall = np.full(len(triangles), -1, dtype=np.int64)
    for axis in range(3):
        for side, plane in enumerate((mesh.bbox_min[axis], mesh.bbox_max[axis])):
            on = (wall < 0) & np.all(np.abs(p[:, :, axis] - plane) <= tol, axis=1)
            wall[on] = 2 * axis + side
    return wall


def box_wall_mask(mesh, vertices, triangles, rel_tol=1e-6) -> np.ndarray:
    """(B,) bool: triangles lying on one of the box's six walls."""
    return box_wall_index(mesh, vertices, triangles, rel_tol) >= 0


def surface_groups(mesh, vertices, triangles):
    """(labels (B,) int64, names [str]): the group of each triangle, one per
    box wall (labels 0-5, :data:`WALL_NAMES`) and one per asteroid (labels 6
    on, named ``asteroid_001`` …): a connected piece of the surface off the
    walls, through shared vertices, the largest (most triangles) first."""
    from ..geometry.graph import components_of_pairs
    labels = box_wall_index(mesh, vertices, triangles)
    rock = np.flatnonzero(labels < 0)
    if len(rock) == 0:
        return labels, list(WALL_NAMES)
    # triangles and vertices as one graph: triangle r is node r, vertex v node R + v
    # (pieces are numbered by their first triangle, before any lone wall vertex)
    n_rock = len(rock)
    _, piece = components_of_pairs(n_rock + len(vertices), np.repeat(np.arange(n_rock), 3),
                                   n_rock + triangles[rock].ravel())
    piece = piece[:n_rock]
    order = np.argsort(-np.bincount(piece), kind="stable")      # largest first
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    labels[rock] = len(WALL_NAMES) + rank[piece]
    width = max(3, len(str(len(order))))
    names = list(WALL_NAMES) + [f"asteroid_{k + 1:0{width}d}" for k in range(len(order))]
    return labels, names


def signed_volume(vertices, triangles) -> float:
    """Volume enclosed by a closed triangle surface (positive if outward)."""
    p = vertices[triangles]
    return float(np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0)


def _normals(vertices, triangles):
    p = vertices[triangles]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    return n / np.where(ln > 0, ln, 1.0)


def obj_bytes(vertices, triangles, comment="", groups=None) -> bytes:
    """Wavefront OBJ; ``groups=(labels, names)`` writes each group's faces
    under ``o NAME`` and ``g NAME`` (Blender splits objects on them)."""
    lines = [f"# {line}" for line in comment.splitlines()]
    lines += [f"v {x!r} {y!r} {z!r}" for x, y, z in np.asarray(vertices, dtype=float).tolist()]
    faces = np.asarray(triangles) + 1
    if groups is None:
        lines += [f"f {a} {b} {c}" for a, b, c in faces.tolist()]
    else:
        labels, names = groups
        for g in np.unique(labels).tolist():
            lines += [f"o {names[g]}", f"g {names[g]}"]
            lines += [f"f {a} {b} {c}" for a, b, c in faces[labels == g].tolist()]
    return ("\n".join(lines) + "\n").encode()


def ply_bytes(vertices, triangles, comment="", groups=None) -> bytes:
    """Binary little-endian PLY; ``groups=(labels, names)`` adds the face
    property ``group`` and one ``comment group K NAME`` line per group."""
    head = ["ply", "format binary_little_endian 1.0"]
    head += [f"comment {line}" for line in comment.splitlines()]
    fields = [("n", "u1"), ("v", "<i4", (3,))]
    if groups is not None:
        labels, names = groups
        head += [f"comment group {k} {name}" for k, name in enumerate(names)]
        fields.append(("group", "<i4"))
    head += [f"element vertex {len(vertices)}", "property double x",
             "property double y", "property double z",
             f"element face {len(triangles)}", "property list uchar int vertex_indices"]
    if groups is not None:
        head.append("property int group")
    head.append("end_header")
    face = np.zeros(len(triangles), dtype=fields)
    face["n"] = 3
    face["v"] = triangles
    if groups is not None:
        face["group"] = labels
    return (("\n".join(head) + "\n").encode()
            + np.asarray(vertices, dtype="<f8").tobytes() + face.tobytes())


def stl_bytes(vertices, triangles, comment="", groups=None) -> bytes:
    """Binary STL (no groups: the format has nowhere to put them)."""
    rec = np.zeros(len(triangles), dtype=[("n", "<f4", (3,)), ("v", "<f4", (3, 3)),
                                          ("attr", "<u2")])
    rec["n"] = _normals(vertices, triangles)
    rec["v"] = vertices[triangles]
    header = ("regn " + " ".join(comment.splitlines())).encode()[:80].ljust(80, b" ")
    return header + struct.pack("<I", len(triangles)) + rec.tobytes()


_WRITERS = {".obj": obj_bytes, ".ply": ply_bytes, ".stl": stl_bytes}
#: Volume formats that can also hold the surface (``surface=True``), through meshio.
MESHIO_SURFACE_EXTS = (".vtu", ".vtk")


def write_surface(mesh, path, *, groups=False, units="m") -> None:
    """Write the outward boundary surface, atomically: .obj / .ply / .stl, or
    .vtu / .vtk (triangles through meshio). ``groups=True`` labels each
    triangle with its box wall or asteroid (:func:`surface_groups`): ``o``/``g``
    in OBJ, the face property ``group`` in PLY, the cell data ``group`` in
    VTU/VTK. ``units`` ('m' or 'km') scales the coordinates; OBJ, PLY and STL
    say which in their comment."""
    ext = extension(path)
    if ext not in _WRITERS and ext not in MESHIO_SURFACE_EXTS:
        raise ExportError(f"{os.fspath(path)}: unknown surface extension {ext or '(none)'}; "
                          f"use one of {' '.join(SURFACE_EXTS + MESHIO_SURFACE_EXTS)}")
    if groups and ext == ".stl":
        raise ExportError(f"{os.fspath(path)}: STL has no groups; write the grouped "
                          "surface as .obj, .ply or .vtu")
    scale = unit_scale(units)
    v, t = boundary_surface(mesh)
    grouping = surface_groups(mesh, v, t) if groups else None
    v = v / scale
    if ext in MESHIO_SURFACE_EXTS:
        _write_meshio_surface(path, v, t, grouping)
        return
    name = os.path.basename(str(mesh.path or "mesh"))
    comment = f"boundary of {name}: {len(t)} triangles\nunits: {units}"
    if grouping is not None:
        comment += (f"\ngroups: {len(grouping[1]) - len(WALL_NAMES)} asteroids, "
                    f"{len(WALL_NAMES)} box walls")
    write_bytes(path, _WRITERS[ext](v, t, comment, grouping))


def _write_meshio_surface(path, vertices, triangles, grouping):
    import meshio
    cell_data = {} if grouping is None else {"group": [grouping[0].astype(np.int32)]}
    out = meshio.Mesh(vertices, [("triangle", triangles.astype(np.int64))],
                      cell_data=cell_data)
    fmt = extension(path)[1:]
    with temp_path(path) as tmp:
        try:
            meshio.write(tmp, out, file_format=fmt)
        except OSError:
            raise
        except Exception as e:          # meshio raises many kinds; one line for the user
            raise ExportError(f"{os.fspath(path)}: meshio could not write {fmt}: {e}") from None
