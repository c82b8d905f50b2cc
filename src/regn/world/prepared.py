"""A tile's query structures, kept beside it: reading a tile costs little.

A tile's first path search builds the structures every later search uses:
the locate tables (affine rows, neighbours by vertex, a fine grid of cell
lists; :mod:`regn.query.locating.locate`), the search graph's edge blocks
(:func:`regn.query.paths.path.graph_arrays`) and the connected components.
On a 65 000-face tile that takes about half a second, several times what
reading the tile costs; a world keeping ``max_tiles`` of many tiles reads
tiles again and again, and would pay it each time.

So the world build writes them once, beside each tile, as
``<tile>.query`` (:func:`prepare`, ``regn.world.prepare(path)``, for a
world built without them), stamped with the tile's sha256 and
:data:`VERSION`; :func:`install` puts them where the queries look for
their structures when the world reads the tile. They change no answer
(``tests/test_world_memory.py`` compares every array).

The compiled walk's arrays of the tile (:data:`STATIC`, ``walk_*``, in
the types the walk reads) are kept too, so that a tile a path only passes
through is read as a map of this file alone; a format-4 file without them
is used as before (the walk then makes them from the tile).

What is kept, and how small (format version 5): only what costs more than
about a millisecond to make again (:data:`DERIVED` is made from the rest
when the tile's first search asks for it), each array once. Arrays a
query reads a few pages of (:data:`WIDE`, and the walk's) are kept in the
type the queries read, and used where they lie in the file's map (only
the pages read take memory); the others are stored in the narrowest type
that holds their values exactly (:func:`narrow`: indices of a u16 tile
fit 16 bits; exit normals float32, as the tile stores its face normals)
and widened back when first used (the exit normals when a raycast first
asks, not when the tile is read). Arrays whose values the walk's hold
(:data:`REMADE`: face vertices, neighbours by vertex slot, face order,
vertices; face centroids, tetrahedron faces and neighbours, gathered from
them) are not stored but named in the header and made from the walk's
when used; the search's centroids and tetrahedron faces are the walk's
arrays themselves. The file: :data:`MAGIC`, the header's length (8
bytes, little endian), a JSON header (version, the tile's sha256, the
sha256 of the array bytes, each array's offset, stored type, shape and
type in memory, and the arrays remade, with their shape and type), then
the arrays, each on a 64-byte boundary. A file of format 4 (every array
stored) is read as it is.

A missing file, or one of another format version, is not used: the
tile's queries build their own structures, as for any REGN (a warning
names an old file). A file stamped for another tile (stale) or whose
bytes do not match its own sha256 or the tile (corrupt) is refused with a
:class:`regn.FormatError` naming it: rewrite it with
``regn.world.prepare("w/world.json")`` or delete it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from functools import cached_property

import numpy as np

from ..errors import FormatError
from ..mesh import Mesh

#: The layout of the arrays kept; a file of another version is not used.
VERSION = 5
#: The versions read (4: every array stored, none :data:`REMADE`).
READABLE = (4, 5)
SUFFIX = ".query"
MAGIC = b"REGNPREP"
ALIGN = 64
#: The mesh's own cached arrays kept (:class:`regn.Mesh` properties).
#: (with them a query rarely needs the records themselves, so the tile's
#: records are not checked again: the sha256 stamp says they are the ones
#: checked when the file was written)
MESH_ARRAYS = ("vertices", "tets", "tet_faces", "neighbors", "opposite_slot",
               "face_vertices", "face_centroids", "boundary_faces", "face_tets")
#: Arrays the queries use that are made from the kept ones when the tile's
#: first path search asks for them (a gather each), not kept.
DERIVED = ("path_centroids", "path_tet_faces", "path_is_portal")
#: Arrays kept in the type the queries read, to be used where they lie in the
#: file's map: a query reads a few pages of them (after 60 paths on the
#: 125-tile world, 1-44 % of their pages had been read), and a narrowed
#: array is widened whole into the process's own memory when first used.
#: The others (indices that fit 16 bits, mostly) are narrowed
#: (:func:`narrow`): that costs their whole width in memory while the tile
#: is loaded, if they are used at all, for a quarter of the disc.
WIDE = ("path_edge_int", "loc_W", "fine_indices", "fine_indptr", "mesh_face_centroids")


#: A tile's arrays for the compiled walk (:mod:`regn.world.walk`) that do
#: not depend on the manifest's links, in the types the walk reads
#: (:func:`static_arrays`): kept as ``walk_<name>``, so a tile the route
#: only passes through is read as a map of this file, with no parse of the
#: tile and nothing built. CEN: the faces' centroids in the search's order.
STATIC = {"TFI": np.int32, "RANK": np.int32, "FO": np.int32, "FT0": np.int32,
          "FBV": np.int32, "NBV": np.int32, "FV": np.int32, "VX": np.float64,
          "CEN": np.float64}


def _face_centroids(a):
    return a["walk_CEN"][a["walk_RANK"]]          # CEN is the centroids in FO's order


def _tet_faces(a):
    return a["walk_FO"][a["walk_TFI"]]            # TFI is each tet's faces' ranks


def _neighbors(a):
    # NBV is the neighbour opposite each vertex slot; the neighbours are by face slot
    return np.take_along_axis(a["walk_NBV"], a["mesh_opposite_slot"].astype(np.intp), axis=1)


#: Arrays stored once: the walk's (:data:`STATIC`) hold the same values as
#: these (in another type), so these are not stored but named in the
#: header's ``remade`` and made from them when read: the same array, or a
#: gather made when first used (:class:`_Remade`). Each is checked when the
#: file is written, value and bits, and stored as before when it differs.
SAME_AS = {"mesh_face_vertices": "walk_FV", "loc_nbv": "walk_NBV",
           "path_face_order": "walk_FO", "mesh_vertices": "walk_VX"}
GATHERED = {"mesh_face_centroids": _face_centroids, "mesh_tet_faces": _tet_faces,
            "mesh_neighbors": _neighbors}
REMADE = (*SAME_AS, *GATHERED)


class _Remade:
    """A :data:`GATHERED` array of a read file, made when first used (by
    :func:`_widen`) from the stored arrays ``a``."""

    __slots__ = ("make", "a", "shape")

    def __init__(self, make, a, shape):
        self.make, self.a, self.shape = make, a, tuple(shape)

    def __len__(self):
        return self.shape[0]

    def array(self):
        v = self.make(self.a)
        if v.shape != self.shape:
            raise ValueError(f"a remade array of shape {v.shape}, not {self.shape}")
        return v


class _Exits:
    """``(exit_face, exit_normal)`` of a tile (what
    :func:`regn.query.sight.raycast._exits` makes, and unpacks): the normals,
    kept narrowed (float32 holds a REGN's face normals exactly), are widened
    when a raycast first asks, not when the tile is read."""

    __slots__ = ("face", "normal", "dtype", "made")

    def __init__(self, face, normal, dtype):
        self.face, self.normal, self.dtype, self.made = face, normal, dtype, None

    def __iter__(self):
        if self.made is None:
            normal = _widen(self.normal, self.dtype)
            normal.flags.writeable = False
            self.made, self.normal = (self.face, normal), None
        return iter(self.made)


def _remade_here(kept, arrays):
    """The names of :data:`REMADE` whose arrays the stored ones ``kept``
    (as they will be read) give back exactly, bit for bit."""
    out = []
    for k in REMADE:
        if k not in arrays:
            continue
        v = np.asarray(arrays[k])
        stored = {n: a for n, a in kept.items() if n not in out}
        try:
            made = stored[SAME_AS[k]] if k in SAME_AS else GATHERED[k](stored)
        except (KeyError, IndexError, ValueError):
            continue
        made = np.asarray(made)
        if made.shape == v.shape and made.astype(v.dtype).tobytes() == v.tobytes():
            out.append(k)
    return out


def sidecar_path(manifest, i) -> str:
    return os.path.splitext(manifest.tile_path(i))[0] + SUFFIX


def tile_arrays(mesh) -> dict:
    """Every array :func:`install` puts back (building them on ``mesh``),
    :data:`DERIVED` included."""
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


def narrow(v) -> np.ndarray:
    """``v`` in the narrowest type that holds every value exactly (whole
    numbers: the smallest integer type spanning their range; float64:
    float32 when every value, NaN and -0 included, comes back bit for bit)."""
    v = np.asarray(v)
    if v.size and v.dtype.kind in "iu" and v.dtype.itemsize > 1:
        lo, hi = int(v.min()), int(v.max())
        for dt in (np.uint8, np.int8, np.uint16, np.int16, np.int32):
            if dt().itemsize >= v.dtype.itemsize:
                break
            if np.iinfo(dt).min <= lo and hi <= np.iinfo(dt).max:
                return v.astype(dt)
    if v.size and v.dtype == np.float64:
        f = v.astype(np.float32)
        if np.array_equal(f.astype(np.float64).view(np.uint64), v.view(np.uint64)):
            return f
    return v


def sidecar_bytes(mesh, sha256) -> bytes:
    """The file's bytes (see the module docstring)."""
    arrays = {k: v for k, v in tile_arrays(mesh).items() if k not in DERIVED}
    arrays.update({f"walk_{k}": v for k, v in static_arrays(mesh).items()})
    kept = {k: np.ascontiguousarray(v if k in WIDE or k.startswith("walk_")
                                    else narrow(v))   # (0-d stay 0-d)
            for k, v in ((k, np.asarray(v)) for k, v in arrays.items())}
    remade = {k: [list(np.shape(arrays[k])), np.asarray(arrays[k]).dtype.str]
              for k in _remade_here(kept, arrays)}
    index, offset, parts = {}, 0, []
    for k, v in arrays.items():
        if k in remade:
            continue
        index[k] = [offset, kept[k].dtype.str, list(np.shape(v)), np.asarray(v).dtype.str]
        pad = -kept[k].nbytes % ALIGN
        parts += [kept[k].tobytes(), bytes(pad)]
        offset += kept[k].nbytes + pad
    body = b"".join(parts)
    head = json.dumps({"version": VERSION, "sha256": sha256,
                       "data_sha256": hashlib.sha256(body).hexdigest(),
                       "arrays": index, "remade": remade}).encode()
    start = len(MAGIC) + 8 + len(head)
    return b"".join([MAGIC, len(head).to_bytes(8, "little"), head,
                     bytes(-start % ALIGN), body])


def write_sidecar(manifest, i, mesh) -> str:
    """Write tile ``i``'s structures beside it (atomically); its path."""
    from .._atomic import atomic_write
    path = sidecar_path(manifest, i)
    atomic_write(path, sidecar_bytes(mesh, manifest.tiles[i].sha256), overwrite=True)
    return path


def _refuse(path, manifest, why):
    return FormatError(f"{path}: {why}; rewrite it with regn.world.prepare"
                       f"({manifest.path!r}) or delete it")


def read_sidecar(path, manifest, i, *, check=True):
    """``(arrays, types in memory)`` of tile ``i``'s sidecar ``path``, as
    kept (views of a private map of the file; a gathered :data:`REMADE`
    one is made by :func:`_widen`); None when there is none or it is of
    another format version. Raises FormatError when it is another tile's (its
    sha256 stamp) or damaged (``check``: the sha256 of its array bytes too)."""
    import mmap
    try:
        with open(path, "rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:           # (an empty file cannot be mapped)
        raise _refuse(path, manifest, f"cannot read it ({e})") from None
    try:
        n = int.from_bytes(data[len(MAGIC):len(MAGIC) + 8], "little")
        if data[:len(MAGIC)] != MAGIC or n > len(data):
            raise _refuse(path, manifest, "not a regn query-structure file")
        try:
            head = json.loads(bytes(data[len(MAGIC) + 8:len(MAGIC) + 8 + n]))
            version = head.get("version")
        except (ValueError, AttributeError):
            raise _refuse(path, manifest, "its header is damaged") from None
        if version not in READABLE:
            warnings.warn(f"{path}: query structures of format version {version}, not "
                          f"{VERSION}: not used (regn.world.prepare({manifest.path!r}) "
                          "rewrites them)", RuntimeWarning, stacklevel=4)
            return None
        if head.get("sha256") != manifest.tiles[i].sha256:
            raise _refuse(path, manifest, f"made for another tile (sha256 "
                          f"{str(head.get('sha256'))[:12]}..., {manifest.where(i)} is "
                          f"{manifest.tiles[i].sha256[:12]}...): stale")
        start = len(MAGIC) + 8 + n
        start += -start % ALIGN
        if check and _file_sha256(path, start) != head.get("data_sha256"):
            raise _refuse(path, manifest, "its arrays do not match their sha256: damaged")
        out = {}
        for k, (off, stored, shape, _) in head["arrays"].items():
            out[k] = np.frombuffer(data, np.dtype(stored), math.prod(shape),
                                   start + off).reshape(shape)
        types = {k: np.dtype(v[3]) for k, v in head["arrays"].items()}
        for k, (shape, dtype) in head.get("remade", {}).items():
            if k in SAME_AS:
                out[k] = out[SAME_AS[k]]
            else:
                out[k] = _Remade(GATHERED[k], out, shape)
            types[k] = np.dtype(dtype)
        return out, types
    except FormatError:
        raise
    except (ValueError, KeyError, TypeError) as e:
        raise _refuse(path, manifest, f"its layout is damaged ({e})") from None


def _file_sha256(path, start) -> str:
    """sha256 of the file from ``start`` on, read through the file, not the
    map: hashing through the map would make every page of it resident in
    the process for as long as the tile is loaded."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        fh.seek(start)
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _widen(v, dtype):
    """``v`` as ``dtype`` (in the allocator's heap: a tile read widens about
    1.5 MiB, and memory of its own map would be faulted in afresh at every
    read, a thousand page faults a path on the 125-tile world)."""
    if isinstance(v, _Remade):
        v = v.array()
    return v if v.dtype == dtype else v.astype(dtype)


def install(manifest, i, mesh, *, check=True, got=...) -> bool:
    """Give ``mesh`` (tile ``i``, just read) the structures kept beside it;
    False (and nothing changed) when there are none of this format.
    FormatError for a stale or damaged file (see :func:`read_sidecar`;
    ``check``: the sha256 of its arrays too; ``got``: what read_sidecar
    gave, when read already). A :class:`KeptMesh` widens its mesh arrays
    when first used, a :class:`regn.Mesh` gets them now."""
    from ..query.common import scratch
    path = sidecar_path(manifest, i)
    if got is ...:
        got = read_sidecar(path, manifest, i, check=check)
    if got is None:
        return False
    a, types = got
    T, F = len(a["loc_W"]), len(a["path_face_order"])
    if T != mesh.n_tets or F != mesh.n_faces or len(a["mesh_tets"]) != T:
        raise _refuse(path, manifest, f"its arrays are for {T} tetrahedra and {F} faces, "
                      f"the tile has {mesh.n_tets} and {mesh.n_faces}: damaged")
    held = {k: (a[f"mesh_{k}"], types[f"mesh_{k}"]) for k in MESH_ARRAYS}
    if isinstance(mesh, KeptMesh):
        mesh.__dict__["_kept_arrays"] = held
    else:
        for k, (v, dtype) in held.items():   # what the cached properties would compute
            mesh.__dict__[k] = v = _widen(v, dtype)
            v.flags.writeable = False
    w = {k: _widen(a[k], types[k]) for k in a
         if not k.startswith(("mesh_", "path_", "walk_")) and k != "exit_normal"}
    w["components"].flags.writeable = False
    s = scratch(mesh)
    s["components"] = w["components"]
    s["loc"] = {"W": w["loc_W"], "nbv": w["loc_nbv"], "T": T,
                "fine": {k[5:]: w[k] for k in w if k.startswith("fine_")}}
    s["exits"] = _Exits(w["exit_face"], a["exit_normal"], types["exit_normal"])
    s["path_arrays"] = _PathArrays(a, types)
    return True


class _PathArrays(dict):
    """What :func:`regn.query.paths.path.graph_arrays` returns, made when the
    tile's first search asks: the kept arrays widened, :data:`DERIVED` made
    as that function makes them (the centroids and tetrahedron faces in the
    search's order are the walk's, when kept)."""

    def __init__(self, a, types):
        super().__init__()
        self._held = {k[5:]: (a[k], types[k]) for k in a if k.startswith("path_")}
        self._a, self._types = a, types            # (as kept: indices)

    def __bool__(self):
        return True

    def __missing__(self, key):
        if key in self._held:
            v = _widen(*self._held.pop(key))
            self[key] = v
            return v
        a, types = self._a, self._types
        order = self["face_order"]
        if key == "centroids":
            v = a["walk_CEN"] if "walk_CEN" in a else \
                _widen(a["mesh_face_centroids"], types["mesh_face_centroids"])[order]
        elif key == "tet_faces" and "walk_TFI" in a:
            v = _widen(a["walk_TFI"], np.int64)
        elif key == "tet_faces":
            rank = np.empty(len(order), np.int64)
            rank[order] = np.arange(len(order))
            v = rank[_widen(a["mesh_tet_faces"], types["mesh_tet_faces"])]
        elif key == "is_portal":
            is_portal = np.ones(len(order), bool)
            is_portal[a["mesh_boundary_faces"]] = False
            v = is_portal[order]
        else:
            raise KeyError(key)
        self[key] = v
        return v


class KeptMesh(Mesh):
    """A world's tile read with its ``.query`` file: its cached mesh arrays
    (:data:`MESH_ARRAYS`) are widened from the file when first used (a
    tile's queries use some of them, and only on some tiles), else made as
    :class:`regn.Mesh` makes them."""


def _kept_property(name):
    plain = Mesh.__dict__[name]

    def get(self):
        held = self.__dict__.get("_kept_arrays")
        if held and name in held:
            v = _widen(*held.pop(name))
            v.flags.writeable = False
            return v
        return plain.func(self)
    get.__doc__ = plain.__doc__
    prop = cached_property(get)
    prop.__set_name__(KeptMesh, name)
    return prop


for _name in MESH_ARRAYS:
    setattr(KeptMesh, _name, _kept_property(_name))


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


def static_arrays(mesh) -> dict:
    """The arrays of :data:`STATIC` of a tile's mesh, from its search graph
    and locate tables (read from beside the tile, or built)."""
    from ..query.locating.locate import locate_tables
    from ..query.paths._path_kernels import ET0
    a = search_arrays(mesh)
    edge_int = np.asarray(a["edge_int"])
    F, T = int(mesh.n_faces), int(mesh.n_tets)
    fo = np.asarray(a["face_order"], np.int64)
    rank = np.empty(F, np.int64)
    rank[fo] = np.arange(F)
    ft0 = np.empty(F, np.int64)
    ft0[fo] = edge_int[:F, ET0]
    tf = np.asarray(mesh.tet_faces, np.int64)
    fbv = np.empty((T, 4), np.int64)
    fbv[np.repeat(np.arange(T), 4), np.asarray(mesh.opposite_slot).reshape(-1)] = tf.reshape(-1)
    out = {"TFI": a["tet_faces"], "RANK": rank, "FO": fo, "FT0": ft0, "FBV": fbv,
           "NBV": locate_tables(mesh).nbv, "FV": mesh.face_vertices, "VX": mesh.vertices,
           "CEN": a["centroids"]}
    return {k: np.ascontiguousarray(v, STATIC[k]).reshape(np.shape(v)) for k, v in out.items()}


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
