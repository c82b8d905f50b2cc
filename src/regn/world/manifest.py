"""The world manifest: a small JSON file beside the tiles.

    {"format": "regn-world", "version": 1,
     "box": [[x0, y0, z0], [x1, y1, z1]], "grid": [nx, ny, nz],
     "tile_size": [sx, sy, sz], "agent_radius": r, "detail": d, "seed": s,
     "tiles": [{"id": "0_0_0", "index": [0, 0, 0], "box": [[...], [...]],
                "file": "tile_0_0_0.rgn", "sha256": "...", "bytes": n,
                "tets": T, "faces": F, "nodes": [portal node ids],
                "node_costs": [[...], ...]}, ...],
     "links": [{"a": "0_0_0", "b": "1_0_0", "axis": 0, "plane": x,
                "faces": [[fa, fb], ...]}, ...],
     "nodes": [{"link": li, "faces": [fa, fb], "point": [x, y, z]}, ...],
     "build": {...the build report...}}

A link joins two tiles whose boxes touch across a face of each (``a``
below ``b`` along ``axis``, on the plane ``x[axis] = plane``): face ``fa``
of tile ``a`` is the same triangle as face ``fb`` of tile ``b``, so a path
crosses there. The portal nodes are the points of the hierarchical path
search (:mod:`regn.world.route`): each sits on a linked face, and each
tile lists its nodes and the cost of the cheapest flight between each pair
of them inside it (``null``: no flight).

:func:`read_manifest` checks everything that can be checked without reading
a tile (every key, boxes inside the world and not overlapping, links
between touching tiles, face numbers in range); a tile's bytes are checked
against their sha256 when a tile is read (:meth:`Manifest.tile_bytes`).
Every failure is a :class:`regn.FormatError` naming the manifest and the
entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError

FORMAT = "regn-world"
VERSION = 1


@dataclass
class Tile:
    """One tile of the manifest."""
    id: str
    index: tuple
    lo: np.ndarray
    hi: np.ndarray
    file: str
    sha256: str
    bytes: int
    tets: int
    faces: int
    nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    node_costs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def to_json(self) -> dict:
        return {"id": self.id, "index": list(self.index),
                "box": [self.lo.tolist(), self.hi.tolist()], "file": self.file,
                "sha256": self.sha256, "bytes": int(self.bytes), "tets": int(self.tets),
                "faces": int(self.faces), "nodes": self.nodes.tolist(),
                "node_costs": [[None if not np.isfinite(c) else round(float(c), 3)
                                for c in row] for row in self.node_costs]}


@dataclass
class Link:
    """Linked faces of two touching tiles (``a`` below ``b`` along ``axis``)."""
    a: int
    b: int
    axis: int
    plane: float
    faces: np.ndarray          # (L,2) int64: face of a, face of b

    def to_json(self, tiles) -> dict:
        return {"a": tiles[self.a].id, "b": tiles[self.b].id, "axis": int(self.axis),
                "plane": float(self.plane), "faces": self.faces.tolist()}


@dataclass
class Manifest:
    """A world's manifest, read and checked (see the module docstring)."""
    path: str | None
    lo: np.ndarray
    hi: np.ndarray
    grid: tuple
    tile_size: np.ndarray
    tiles: list
    links: list
    node_link: np.ndarray      # (N,) link of each portal node
    node_faces: np.ndarray     # (N,2) its faces in tiles a and b
    node_points: np.ndarray    # (N,3)
    agent_radius: float = 0.0
    detail: float | None = None
    seed: int = 0
    build: dict = field(default_factory=dict)

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path)) if self.path else "."

    def tile_path(self, i) -> str:
        return os.path.join(self.directory, self.tiles[i].file)

    def tile_at(self, index) -> int:
        """The tile number of grid index (i, j, k)."""
        return self._by_index[tuple(int(v) for v in index)]

    def __post_init__(self):
        self._by_index = {t.index: i for i, t in enumerate(self.tiles)}

    def where(self, i) -> str:
        """How errors name tile ``i``."""
        t = self.tiles[i]
        return f"{self.path or 'manifest'}: tiles[{i}] (id {t.id}, {t.file})"

    def tile_bytes(self, i, *, check=True):
        """The bytes of tile ``i`` (memory-mapped when the file allows it),
        checked against the manifest's size and sha256 when ``check``."""
        import mmap
        p = self.tile_path(i)
        try:
            with open(p, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size != self.tiles[i].bytes:
                    raise FormatError(f"{self.where(i)}: the file is {size} bytes, the "
                                      f"manifest says {self.tiles[i].bytes} (changed?)")
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
                # (hashed through the file, not the map: that would make every
                # page of the map resident in the process while the tile is kept)
                digest = _sha256_of_file(fh) if check else None
        except FileNotFoundError:
            raise FormatError(f"{self.where(i)}: tile file missing ({p})") from None
        except OSError as e:
            raise FormatError(f"{self.where(i)}: cannot read {p}: {e.strerror or e}") from None
        if check and digest != self.tiles[i].sha256:
            raise FormatError(f"{self.where(i)}: sha256 does not match the manifest "
                              "(the tile was changed or replaced)")
        return data

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION,
                "box": [self.lo.tolist(), self.hi.tolist()], "grid": list(self.grid),
                "tile_size": self.tile_size.tolist(), "agent_radius": self.agent_radius,
                "detail": self.detail, "seed": self.seed,
                "tiles": [t.to_json() for t in self.tiles],
                "links": [lk.to_json(self.tiles) for lk in self.links],
                "nodes": [{"link": int(li), "faces": f.tolist(), "point": p.tolist()}
                          for li, f, p in zip(self.node_link, self.node_faces,
                                              self.node_points)],
                "build": self.build}

    def dumps(self) -> bytes:
        return (json.dumps(self.to_json(), indent=1, allow_nan=False) + "\n").encode()


def sha256_of(data) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_of_file(fh) -> str:
    h = hashlib.sha256()
    fh.seek(0)
    for block in iter(lambda: fh.read(1 << 20), b""):
        h.update(block)
    return h.hexdigest()


# --- reading --------------------------------------------------------------------
class _Reader:
    """Turns the JSON document into a :class:`Manifest`, naming each entry it
    refuses."""

    def __init__(self, path):
        self.path = path or "manifest"

    def fail(self, where, message):
        raise FormatError(f"{where}: {message}", path=self.path)

    def get(self, obj, key, where, kind=None):
        if not isinstance(obj, dict) or key not in obj:
            self.fail(where, f"missing '{key}'")
        v = obj[key]
        if kind is not None and (not isinstance(v, kind) or isinstance(v, bool)):
            self.fail(f"{where}.{key}", f"expected {getattr(kind, '__name__', kind)}, "
                      f"got {type(v).__name__}")
        return v

    def numbers(self, v, shape, where):
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            self.fail(where, f"expected numbers of shape {shape}")
        if a.shape != shape or not np.isfinite(a).all():
            self.fail(where, f"expected finite numbers of shape {shape}")
        return a

    def box(self, v, where):
        b = self.numbers(v, (2, 3), where)
        if np.any(b[1] <= b[0]):
            self.fail(where, f"max must be > min, got {b.tolist()}")
        return b[0], b[1]

    def tile(self, i, t, n_nodes):
        where = f"tiles[{i}]"
        tid = self.get(t, "id", where, str)
        where = f"tiles[{i}] (id {tid})"
        index = tuple(int(v) for v in self.numbers(self.get(t, "index", where), (3,),
                                                    f"{where}.index"))
        lo, hi = self.box(self.get(t, "box", where), f"{where}.box")
        name = self.get(t, "file", where, str)
        if os.path.isabs(name) or os.path.basename(name) != name:
            self.fail(f"{where}.file", f"a tile is a file beside the manifest, not {name!r}")
        sha = self.get(t, "sha256", where, str)
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            self.fail(f"{where}.sha256", "expected 64 lowercase hex digits")
        counts = [self.get(t, k, where, int) for k in ("bytes", "tets", "faces")]
        nodes = np.asarray(t.get("nodes", []), dtype=np.int64).reshape(-1)
        if np.any((nodes < 0) | (nodes >= n_nodes)):
            self.fail(f"{where}.nodes", f"node numbers must be in 0..{n_nodes - 1}")
        raw = t.get("node_costs", [])
        try:
            costs = np.array([[np.inf if c is None else float(c) for c in row] for row in raw],
                             dtype=np.float64).reshape(len(nodes), len(nodes))
        except (TypeError, ValueError):
            self.fail(f"{where}.node_costs", f"expected a {len(nodes)} x {len(nodes)} "
                      "table of numbers (or null)")
        return Tile(tid, index, lo, hi, name, sha, *counts, nodes, costs)

    def link(self, i, lk, ids, tiles):
        where = f"links[{i}]"
        a, b = (self.get(lk, k, where, str) for k in ("a", "b"))
        for k, v in (("a", a), ("b", b)):
            if v not in ids:
                self.fail(f"{where}.{k}", f"no tile has id {v!r}")
        ia, ib = ids[a], ids[b]
        axis = self.get(lk, "axis", where, int)
        if axis not in (0, 1, 2):
            self.fail(f"{where}.axis", f"expected 0, 1 or 2, got {axis}")
        ta, tb = tiles[ia], tiles[ib]
        plane = float(self.numbers(self.get(lk, "plane", where), (), f"{where}.plane"))
        others = [k for k in range(3) if k != axis]
        touching = (ta.hi[axis] == plane == tb.lo[axis]) and all(
            min(ta.hi[k], tb.hi[k]) > max(ta.lo[k], tb.lo[k]) for k in others)
        if not touching:
            self.fail(where, f"tiles {a} and {b} do not touch across the plane "
                      f"x[{axis}] = {plane:g} (a link joins faces of neighbours)")
        faces = np.asarray(self.get(lk, "faces", where, list), dtype=np.int64).reshape(-1, 2) \
            if lk["faces"] else np.zeros((0, 2), np.int64)
        for col, t, name in ((0, ta, a), (1, tb, b)):
            bad = (faces[:, col] < 0) | (faces[:, col] >= t.faces)
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                self.fail(f"{where}.faces[{j}]", f"face {int(faces[j, col])} is not a face "
                          f"of tile {name} ({t.faces} faces)")
        return Link(ia, ib, axis, plane, faces)

    def document(self, doc):
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            self.fail("format", f"not a regn world manifest (no \"format\": \"{FORMAT}\")")
        if doc.get("version") != VERSION:
            self.fail("version", f"version {doc.get('version')!r} is not {VERSION}")
        lo, hi = self.box(self.get(doc, "box", "manifest"), "box")
        grid = tuple(int(v) for v in self.numbers(self.get(doc, "grid", "manifest"), (3,),
                                                   "grid"))
        size = self.numbers(self.get(doc, "tile_size", "manifest"), (3,), "tile_size")
        raw_nodes = doc.get("nodes", [])
        tiles = [self.tile(i, t, len(raw_nodes))
                 for i, t in enumerate(self.get(doc, "tiles", "manifest", list))]
        ids = self.ids(tiles)
        self.boxes(tiles, lo, hi)
        links = [self.link(i, lk, ids, tiles)
                 for i, lk in enumerate(self.get(doc, "links", "manifest", list))]
        node_link, node_faces, node_points = self.nodes(raw_nodes, links)
        return Manifest(self.path, lo, hi, grid, size, tiles, links, node_link, node_faces,
                        node_points, float(doc.get("agent_radius") or 0.0),
                        doc.get("detail"), int(doc.get("seed") or 0), doc.get("build") or {})

    def ids(self, tiles):
        ids = {}
        for i, t in enumerate(tiles):
            if t.id in ids:
                self.fail(f"tiles[{i}]", f"id {t.id!r} is also tiles[{ids[t.id]}]'s")
            ids[t.id] = i
        if not tiles:
            self.fail("tiles", "a world has at least one tile")
        return ids

    def boxes(self, tiles, lo, hi):
        for i, t in enumerate(tiles):
            if np.any(t.lo < lo) or np.any(t.hi > hi):
                self.fail(f"tiles[{i}] (id {t.id}).box", "reaches outside the world's box")
        los = np.array([t.lo for t in tiles])
        his = np.array([t.hi for t in tiles])
        for i in range(len(tiles)):
            over = np.all((np.minimum(his[i], his) > np.maximum(los[i], los)), axis=1)
            over[:i + 1] = False
            if over.any():
                j = int(np.flatnonzero(over)[0])
                self.fail(f"tiles[{i}] (id {tiles[i].id}).box",
                          f"overlaps tiles[{j}] (id {tiles[j].id})")

    def nodes(self, raw, links):
        n = len(raw)
        link = np.zeros(n, np.int64)
        faces = np.zeros((n, 2), np.int64)
        points = np.zeros((n, 3))
        for i, nd in enumerate(raw):
            where = f"nodes[{i}]"
            link[i] = self.get(nd, "link", where, int)
            if not 0 <= link[i] < len(links):
                self.fail(f"{where}.link", f"no link {link[i]}")
            faces[i] = self.numbers(self.get(nd, "faces", where), (2,), f"{where}.faces")
            points[i] = self.numbers(self.get(nd, "point", where), (3,), f"{where}.point")
        return link, faces, points


def parse_manifest(text, path=None) -> Manifest:
    """A :class:`Manifest` from its JSON text (FormatError naming the entry)."""
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise FormatError(f"not JSON: {e}", path=path or "manifest") from None
    return _Reader(path).document(doc)


def read_manifest(path) -> Manifest:
    """Read and check the manifest at ``path`` (tiles are not read)."""
    from .._atomic import note_input
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            text = fh.read(64 << 20)
    except OSError as e:
        raise FormatError(f"cannot read: {e.strerror or e}", path=path) from None
    note_input(path)
    return parse_manifest(text, path)


def is_manifest_path(path) -> bool:
    """Whether a map argument names a world manifest (``*.json``)."""
    return os.fspath(path).lower().endswith(".json")
