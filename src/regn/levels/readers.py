"""Level files: triangle soups (.obj .off read here, line by line; .ply .stl
.glb .gltf through trimesh, scenes flattened with their transforms) and
voxel occupancy arrays (.npy).

Every reader returns a :class:`Soup` (all objects merged, quads and n-gons
fanned into triangles) or a :class:`Voxels`. Nothing about closure, winding
or manifoldness is checked here: the solid decision does not trust them.
What has no meaning is refused with one :class:`BuildError` naming the file
(and the line, for the text formats): a missing or empty file, a number that
is not finite, a vertex index out of range, a face of fewer than 3 vertices.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from .. import _atomic
from ..errors import BuildError

#: The largest magnitude a map can store (its coordinates are float32).
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: File name endings read as triangle soups.
SOUP_SUFFIXES = (".obj", ".off", ".ply", ".stl", ".glb", ".gltf")


class Soup(NamedTuple):
    """A merged triangle soup: ``verts`` (V,3) float64, ``tris`` (T,3) int64,
    ``name`` (the file's name), ``objects`` (how many meshes were merged)."""
    verts: np.ndarray
    tris: np.ndarray
    name: str = "soup"
    objects: int = 1

    def __repr__(self):                 # the tuple's own printed every coordinate
        return (f"<Soup {self.name!r}: {len(self.verts)} vertices, {len(self.tris)} "
                f"triangles, {self.objects} object{'s' if self.objects != 1 else ''}>")


class Voxels(NamedTuple):
    """Solid voxels: ``ijk`` (N,3) int64 indices of the solid ones, ``size``
    (the edge, metres), ``origin`` (the corner of voxel (0, 0, 0)), ``shape``
    (the array's shape, or the indices' extent + 1), ``name``."""
    ijk: np.ndarray
    size: float
    origin: np.ndarray
    shape: tuple
    name: str = "voxels"

    def __repr__(self):
        return (f"<Voxels {self.name!r}: {len(self.ijk)} solid of "
                f"{'x'.join(map(str, self.shape))}, {self.size:g} m, origin "
                f"{tuple(float(v) for v in self.origin)}>")

    @property
    def bounds(self):
        """``(lo, hi)`` of the whole voxel array."""
        return self.origin, self.origin + self.size * np.asarray(self.shape, np.float64)


def _read_bytes(path):
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise BuildError(f"{path}: cannot read level file: {e.strerror or e}") from None
    _atomic.note_input(path)
    if not data.strip():
        raise BuildError(f"{path}: the file is empty")
    return data


def _bad_number(path, line, text):
    return BuildError(f"{path}: line {line}: not a finite number within +-{FLOAT32_MAX:.4g} "
                      f"(float32): {text.strip()[:80]!r}")


def _fan(face):
    """Triangles of a polygon's fan from its first vertex."""
    return [(face[0], face[i], face[i + 1]) for i in range(1, len(face) - 1)]


def _obj_index(tok, n_verts, path, line):
    """A 0-based vertex index of an OBJ face token (``7``, ``7/1/2``,
    ``-1``); BuildError when it is not a valid reference."""
    head = tok.split(b"/", 1)[0]
    try:
        i = int(head)
    except ValueError:
        raise BuildError(f"{path}: line {line}: bad vertex reference {tok.decode(errors='replace')!r}") \
            from None
    j = i - 1 if i > 0 else n_verts + i
    if i == 0 or not 0 <= j < n_verts:
        raise BuildError(f"{path}: line {line}: vertex index {i} out of range "
                         f"(1..{n_verts} defined so far)")
    return j


def _fan_all(flat, counts):
    """(T,3) triangles fanning polygons of ``counts`` corners laid end to end in ``flat``."""
    ntri = counts - 2
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    poly = np.repeat(np.arange(len(counts)), ntri)
    m = np.arange(int(ntri.sum())) - np.repeat(np.cumsum(ntri) - ntri, ntri) + 1
    s = starts[poly]
    return np.stack([flat[s], flat[s + m], flat[s + m + 1]], axis=1)


def _obj_fast(lines):
    """``(verts, tris, objects)`` of a plain OBJ read in bulk, or None when
    anything is unusual (the line-by-line reader then finds and names it)."""
    vl = [ln[2:] for ln in lines if ln[:2] == b"v "]
    fl = [ln[2:] for ln in lines if ln[:2] == b"f "]
    if not fl or not vl:
        return None
    try:
        vt = b" ".join(vl).split()
        if len(vt) != 3 * len(vl):
            return None
        verts = np.array(vt).astype(np.float64).reshape(-1, 3)
        ft = b" ".join(fl).split()
        if b"/" in b"".join(fl):
            ft = [t.split(b"/", 1)[0] for t in ft]
        flat = np.array(ft).astype(np.int64)
    except ValueError:
        return None
    counts = np.array([len(ln.split()) for ln in fl], np.int64)
    if counts.sum() != len(flat) or counts.min() < 3 or not (np.abs(verts) <= FLOAT32_MAX).all():
        return None
    if flat.min() < 1 or flat.max() > len(verts):
        return None
    objects = sum(1 for ln in lines if ln[:2] == b"o ")
    return verts, _fan_all(flat - 1, counts), max(objects, 1)


def read_obj(path):
    """A :class:`Soup` of a Wavefront OBJ file (``v`` and ``f`` lines; every
    object and group merged; other statements ignored)."""
    path = os.fspath(path)
    data = _read_bytes(path)
    fast = _obj_fast([ln.strip() for ln in data.splitlines()])
    if fast is not None:
        return Soup(fast[0], fast[1], os.path.basename(path), fast[2])
    verts, tris, objects = [], [], 0
    for line, raw in enumerate(data.splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        key = parts[0]
        if key == b"o":
            objects += 1
        elif key == b"v":
            if len(parts) < 4:
                raise BuildError(f"{path}: line {line}: a vertex needs x y z")
            try:
                xyz = (float(parts[1]), float(parts[2]), float(parts[3]))
            except ValueError:
                raise _bad_number(path, line, raw.decode(errors="replace")) from None
            if not all(abs(x) <= FLOAT32_MAX for x in xyz):
                raise _bad_number(path, line, raw.decode(errors="replace"))
            verts.append(xyz)
        elif key == b"f":
            if len(parts) < 4:
                raise BuildError(f"{path}: line {line}: a face needs at least 3 vertices")
            face = [_obj_index(t, len(verts), path, line) for t in parts[1:]]
            tris += _fan(face)
    return _soup(path, verts, tris, max(objects, 1))


def _soup(path, verts, tris, objects=1):
    if not tris:
        raise BuildError(f"{path}: no faces in the file")
    return Soup(np.asarray(verts, np.float64).reshape(-1, 3), np.asarray(tris, np.int64),
                os.path.basename(path), objects)


def _off_numbers(path, lines):
    """``(line number, fields)`` of each non-blank, non-comment line."""
    for n, raw in enumerate(lines, start=1):
        text = raw.split(b"#", 1)[0].split()
        if text:
            yield n, text


def read_off(path):
    """A :class:`Soup` of an OFF file (``OFF``, counts, vertices, faces)."""
    path = os.fspath(path)
    rows = _off_numbers(path, _read_bytes(path).splitlines())
    n, head = next(rows)
    if head[0].upper().endswith(b"OFF"):
        head = head[1:] or next(rows)[1]
    try:
        nv, nf = int(head[0]), int(head[1])
    except (ValueError, IndexError):
        raise BuildError(f"{path}: line {n}: expected the counts 'vertices faces edges'") \
            from None
    verts, tris = [], []
    for n, f in rows:
        if len(verts) < nv:
            try:
                xyz = tuple(float(x) for x in f[:3])
            except ValueError:
                raise _bad_number(path, n, b" ".join(f).decode(errors="replace")) from None
            if len(xyz) < 3 or not all(abs(x) <= FLOAT32_MAX for x in xyz):
                raise _bad_number(path, n, b" ".join(f).decode(errors="replace"))
            verts.append(xyz)
            continue
        if len(tris) and len(tris) >= 10 * nf + 10:
            break
        try:
            k = int(f[0])
            face = [int(x) for x in f[1:1 + k]]
        except ValueError:
            raise BuildError(f"{path}: line {n}: a face is 'k i1 .. ik'") from None
        if k < 3 or len(face) < k:
            raise BuildError(f"{path}: line {n}: a face needs at least 3 vertices")
        bad = [i for i in face if not 0 <= i < nv]
        if bad:
            raise BuildError(f"{path}: line {n}: vertex index {bad[0]} out of range "
                             f"(0..{nv - 1})")
        tris += _fan(face)
    return _soup(path, verts, tris)


def read_with_trimesh(path):
    """A :class:`Soup` of any scene trimesh reads (.ply .stl .glb .gltf ...):
    every mesh of the scene placed by its transform and merged."""
    path = os.fspath(path)
    _read_bytes(path)
    try:
        import trimesh
    except ImportError:
        raise BuildError(f"{path}: reading this format needs trimesh "
                         "(pip install 'regn[levels]'), or convert it to .obj") from None
    try:
        scene = trimesh.load(path, force="scene", process=False)
        meshes = scene.dump() if hasattr(scene, "dump") else [scene]
    except Exception as e:  # trimesh raises many kinds of errors on bad input
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BuildError(f"{path}: cannot read level: {msg}") from None
    verts, tris, base = [], [], 0
    for m in meshes:
        f = np.asarray(getattr(m, "faces", np.zeros((0, 3))), np.int64).reshape(-1, 3)
        v = np.asarray(getattr(m, "vertices", np.zeros((0, 3))), np.float64).reshape(-1, 3)
        if len(f) and (f.min() < 0 or f.max() >= len(v)):
            raise BuildError(f"{path}: a face of mesh {len(tris)} refers to vertex "
                             f"{int(f.max())}, past its {len(v)} vertices")
        verts.append(v)
        tris.append(f + base)
        base += len(v)
    v = np.concatenate(verts) if verts else np.zeros((0, 3))
    bad = ~(np.abs(v) <= FLOAT32_MAX).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise BuildError(f"{path}: vertex {i} {v[i].tolist()} is not a finite number "
                         f"within +-{FLOAT32_MAX:.4g} (float32)")
    t = np.concatenate(tris) if tris else np.zeros((0, 3), np.int64)
    if not len(t):
        raise BuildError(f"{path}: no faces in the file")
    return Soup(v, t, os.path.basename(path), len(meshes))


def read_soup(path):
    """A :class:`Soup` of a level file, by its name's ending."""
    p = os.fspath(path).lower()
    if not os.path.exists(path):
        raise BuildError(f"{path}: no such level file")
    if p.endswith(".obj"):
        return read_obj(path)
    if p.endswith(".off"):
        return read_off(path)
    if p.endswith(SOUP_SUFFIXES):
        return read_with_trimesh(path)
    raise BuildError(f"{path}: not a level file (one of {' '.join(SOUP_SUFFIXES)})")


def voxels_from_array(arr, voxel_size, origin=(0.0, 0.0, 0.0), name="voxels"):
    """:class:`Voxels` of a bool (nx, ny, nz) occupancy array or an (N, 3)
    int array of solid voxel indices; BuildError for anything else."""
    a = np.asarray(arr)
    s = float(voxel_size)
    o = np.asarray(origin, np.float64).reshape(3)
    if not (np.isfinite(s) and s > 0):
        raise BuildError(f"{name}: voxel size must be > 0, got {voxel_size}")
    if not np.isfinite(o).all():
        raise BuildError(f"{name}: origin must be finite, got {o.tolist()}")
    if a.ndim == 3 and (a.dtype == bool or a.dtype.kind in "iu"):
        if a.dtype != bool and not np.isin(a, (0, 1)).all():
            raise BuildError(f"{name}: a 3-D occupancy array holds 0/1 or bools")
        if 0 in a.shape:
            raise BuildError(f"{name}: the occupancy array is empty, shape {a.shape}")
        return Voxels(np.argwhere(a).astype(np.int64), s, o, tuple(a.shape), name)
    if a.ndim == 2 and a.shape[1] == 3 and a.dtype.kind in "iu":
        if not len(a):
            raise BuildError(f"{name}: no solid voxels in the index array")
        ijk = a.astype(np.int64)
        if ijk.min() < 0:
            raise BuildError(f"{name}: voxel index {int(ijk.min())} is negative (shift "
                             "--origin instead)")
        return Voxels(ijk, s, o, tuple(int(x) + 1 for x in ijk.max(axis=0)), name)
    raise BuildError(f"{name}: expected a bool (nx, ny, nz) array or an (N, 3) int array "
                     f"of solid voxels, got {a.dtype} {a.shape}")


def read_voxels(path, voxel_size, origin=(0.0, 0.0, 0.0)):
    """:class:`Voxels` of a ``.npy`` file (see :func:`voxels_from_array`)."""
    path = os.fspath(path)
    _read_bytes(path)
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise BuildError(f"{path}: not a .npy array: {str(e).splitlines()[0]}") from None
    return voxels_from_array(arr, voxel_size, origin, name=os.path.basename(path))


__all__ = [
    "Soup",
    "Voxels",
    "read_obj",
    "read_off",
    "read_soup",
    "read_voxels",
    "read_with_trimesh",
    "voxels_from_array",
]
