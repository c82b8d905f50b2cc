"""A tile's query structures, kept beside it: reading a tile costs little.

A tile's first path search builds the structures every later search uses:
the locate tables (affine rows, neighbours by vertex, a fine grid of cell
lists; :mod:`regn.query.locating.locate`), the search graph's edge blocks
(:func:`regn.query.paths.path.graph_arrays`) and the connected components.
On a 65 000-face tile that takes about half a second, several times what
reading the tile costs; a world keeping ``max_tiles`` of many tiles reads
tiles again and again, and would pay it each time.

So the world build writes them once, beside each tile, as
``<tile>.query`` (a JSON index and the arrays, read through a map of
the file) (:func:`prepare`, ``regn.world.prepare(path)``,
for a world built without them), stamped with the tile's sha256 and
:data:`VERSION`; :func:`install` puts them where the queries look for
their structures when the world reads the tile. A missing, stale or
unreadable file is ignored: the tile's queries then build their own, as
for any REGN. They change no answer (``tests/test_worlds.py`` compares).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

#: The layout of the arrays kept; a file of another version is ignored.
VERSION = 3
SUFFIX = ".query"
MAGIC = b"REGNPREP"
ALIGN = 64
#: The mesh's own cached arrays kept (:class:`regn.Mesh` properties).
#: (with them a query rarely needs the records themselves, so the tile's
#: records are not checked again: the sha256 stamp says they are the ones
#: checked when the file was written)
MESH_ARRAYS = ("vertices", "tets", "tet_faces", "neighbors", "opposite_slot",
               "face_vertices", "face_centroids", "boundary_faces")


def sidecar_path(manifest, i) -> str:
    return os.path.splitext(manifest.tile_path(i))[0] + SUFFIX


def tile_arrays(mesh) -> dict:
    """The arrays :func:`install` puts back (building them on ``mesh``)."""
    from ..query.locating.locate import _fine, _prep
    from ..query.locating.sample import components
    from ..query.paths.path import graph_arrays
    from ..query.sight.raycast import _exits
    loc = _prep(mesh)
    fine = _fine(mesh, loc)
    out = {f"path_{k}": np.asarray(v) for k, v in graph_arrays(mesh).items()}
    out.update(loc_W=loc["W"], loc_nbv=loc["nbv"], components=np.asarray(components(mesh)))
    out.update({f"fine_{k}": np.asarray(v) for k, v in fine.items()})
    out.update({f"mesh_{k}": np.asarray(getattr(mesh, k)) for k in MESH_ARRAYS})
    out["exit_face"], out["exit_normal"] = _exits(mesh)
    return out


def sidecar_bytes(mesh, sha256) -> bytes:
    """The file's bytes: :data:`MAGIC`, the header's length (8 bytes, little
    endian), a JSON header (version, the tile's sha256, each array's offset,
    dtype and shape), then the arrays, each on a 64-byte boundary."""
    arrays = tile_arrays(mesh)
    index, offset = {}, 0
    for k, v in arrays.items():
        v = np.asarray(v, order="C")         # (0-d arrays stay 0-d)
        arrays[k] = v
        index[k] = [offset, v.dtype.str, list(v.shape)]
        offset += v.nbytes + (-v.nbytes % ALIGN)
    head = json.dumps({"version": VERSION, "sha256": sha256, "arrays": index}).encode()
    start = len(MAGIC) + 8 + len(head)
    start += -start % ALIGN
    out = bytearray(start + offset)
    out[:len(MAGIC) + 8] = MAGIC + len(head).to_bytes(8, "little")
    out[len(MAGIC) + 8:len(MAGIC) + 8 + len(head)] = head
    for k, (off, _, _) in index.items():
        out[start + off:start + off + arrays[k].nbytes] = arrays[k].tobytes()
    return bytes(out)


def write_sidecar(manifest, i, mesh) -> str:
    """Write tile ``i``'s structures beside it (atomically); its path."""
    from .._atomic import atomic_write
    path = sidecar_path(manifest, i)
    atomic_write(path, sidecar_bytes(mesh, manifest.tiles[i].sha256), overwrite=True)
    return path


def _read(path, sha256):
    """The arrays of a sidecar file, as views of a private (copy-on-write)
    map of it; None when it is missing, unreadable or not this tile's."""
    import mmap
    try:
        with open(path, "rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
        n = int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little")
        if data[:len(MAGIC)] != MAGIC or n > len(data):
            return None
        head = json.loads(bytes(data[len(MAGIC) + 8:len(MAGIC) + 8 + n]))
        if head.get("version") != VERSION or head.get("sha256") != sha256:
            return None
        start = len(MAGIC) + 8 + n
        start += -start % ALIGN
        out = {}
        for k, (off, dtype, shape) in head["arrays"].items():
            dt = np.dtype(dtype)
            count = math.prod(shape)
            out[k] = np.frombuffer(data, dt, count, start + off).reshape(shape)
        return out
    except (OSError, ValueError, KeyError, TypeError):
        return None


def install(manifest, i, mesh) -> bool:
    """Give ``mesh`` (tile ``i``, just read) the structures kept beside it;
    False (and nothing changed) when there are none for this tile."""
    from ..query.common import scratch
    a = _read(sidecar_path(manifest, i), manifest.tiles[i].sha256)
    if a is None:
        return False
    T = len(a["loc_W"])
    if T != mesh.n_tets or len(a["path_face_order"]) != mesh.n_faces:
        return False
    s = scratch(mesh)
    for k in MESH_ARRAYS:                    # what the cached properties would compute
        v = a[f"mesh_{k}"]
        v.flags.writeable = False
        mesh.__dict__[k] = v
    lab = a["components"]
    lab.flags.writeable = False
    s["components"] = lab
    s["loc"] = {"W": a["loc_W"], "nbv": a["loc_nbv"], "T": T,
                "fine": {k[5:]: a[k] for k in a if k.startswith("fine_")}}
    s["path_arrays"] = {k[5:]: a[k] for k in a if k.startswith("path_")}
    s["exits"] = (a["exit_face"], a["exit_normal"])
    return True


def prepare(path, progress=None) -> int:
    """Write every tile's structures beside it (:func:`write_sidecar`) for
    the world whose manifest is ``path`` (each tile checked against its
    sha256 first); the number written."""
    from ..format.reader import parse
    from ..mesh import Mesh
    from .manifest import read_manifest
    m = read_manifest(path)
    n = len(m.tiles)
    for i in range(n):
        write_sidecar(m, i, Mesh.from_parts(parse(m.tile_bytes(i), path=m.tile_path(i))))
        if progress is not None:
            progress(i + 1, n)
    return n


def search_arrays(mesh) -> dict:
    """The tile's search graph arrays (:func:`regn.query.paths.path.graph_arrays`):
    those kept beside the tile, or the mesh's search state's, or made (and
    left where the mesh's own search takes them)."""
    from ..query.common import scratch
    from ..query.paths.path import graph_arrays
    s = scratch(mesh)
    a = s.get("path_arrays")
    if a is not None:
        return a
    if "path" in s:
        g = s["path"]
        graph = g["graph"]
        F = len(graph.face_order)
        return {"edge_int": graph.edge_int, "centroids": graph.node[:F, 4:7],
                "tet_faces": graph.tet_faces, "face_order": graph.face_order,
                "admissible": g["admissible"]}
    a = s["path_arrays"] = graph_arrays(mesh)
    return a


def first_tets(world, t) -> np.ndarray:
    """(F,) each face's first tetrahedron in tile ``t`` (the mesh's
    ``face_tets[:, 0]`` from the search arrays kept beside the tile,
    without checking the tile's records again)."""
    from ..query.paths._path_kernels import ET0
    x = world.extra(t)
    if "first_tets" not in x:
        mesh = world.tile(t)
        a = search_arrays(mesh)
        fo = np.asarray(a["face_order"], np.int64)
        ft0 = np.empty(len(fo), np.int64)
        ft0[fo] = np.asarray(a["edge_int"])[:len(fo), ET0]
        x["first_tets"] = ft0
    return x["first_tets"]
