"""``verify`` of a world: the manifest, every tile, and every link.

* the manifest reads (:func:`regn.world.manifest.read_manifest`);
* each tile's file is there and reads as a REGN; a tile that does not
  (missing, cut short, not a REGN) is *unreadable* (its row's ``readable``
  False), as a map ``regn verify`` cannot read; then it is of the size and
  sha256 the manifest gives, and passes :func:`regn.verify` (``strict`` as
  asked), its box the tile's box;
  its ``.query`` file, when there is one, is this tile's and undamaged
  (:func:`regn.world.prepared.read_sidecar`);
* each link's faces are the faces the two tiles share on their plane (the
  same triangles, found again from the tiles), and each portal node sits
  on a face of its link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError, RegnError
from ..format.reader import parse
from ..mesh import Mesh
from .links import link_faces
from .manifest import read_manifest, sha256_of


@dataclass
class WorldReport:
    path: str
    strict: bool
    tiles: list = field(default_factory=list)  # {"id", "file", "ok", "readable", "problem"}
    links: list = field(default_factory=list)     # {"link", "a", "b", "ok", "problem"}

    @property
    def ok(self) -> bool:
        return all(t["ok"] for t in self.tiles) and all(lk["ok"] for lk in self.links)

    @property
    def unreadable(self) -> list:
        """The rows of the tiles that could not be read as REGN at all."""
        return [t for t in self.tiles if not t["readable"]]

    def to_dict(self) -> dict:
        return {"path": self.path, "world": True, "ok": self.ok, "strict": self.strict,
                "tiles": self.tiles, "links": self.links}


def _read_tile(m, i):
    """(the bytes of tile ``i``, its Mesh); FormatError naming the tile and
    its file when it is missing, cannot be read or is not a REGN."""
    p = m.tile_path(i)
    try:
        with open(p, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise FormatError(f"{m.where(i)}: tile file missing ({p})") from None
    except OSError as e:
        raise FormatError(f"{m.where(i)}: cannot read {p}: {e.strerror or e}") from None
    try:
        return data, Mesh.from_parts(parse(data))
    except FormatError as e:      # named as the manifest names the tile (with its file)
        raise FormatError(e.message, offset=e.offset, section=e.section,
                          path=m.where(i)) from None


def _tile(m, i, strict, progress=None):
    from ..checks import verify
    from .prepared import read_sidecar, sidecar_path
    t = m.tiles[i]
    row = {"id": t.id, "file": t.file, "ok": False, "readable": False, "problem": None}
    try:
        data, mesh = _read_tile(m, i)
    except RegnError as e:
        row["problem"] = str(e)
        return row, None
    row["readable"] = True
    try:
        if len(data) != t.bytes:
            row["problem"] = (f"{m.where(i)}: the file is {len(data)} bytes, the manifest "
                              f"says {t.bytes} (changed?)")
            return row, mesh
        if sha256_of(data) != t.sha256:
            row["problem"] = (f"{m.where(i)}: sha256 does not match the manifest (the tile "
                              "was changed or replaced)")
            return row, mesh
        if not (np.array_equal(mesh.bbox_min, t.lo) and np.array_equal(mesh.bbox_max, t.hi)):
            row["problem"] = (f"{m.where(i)}: its box {mesh.bbox_min.tolist()} .. "
                              f"{mesh.bbox_max.tolist()} is not the manifest's")
            return row, mesh
        if mesh.n_faces != t.faces or mesh.n_tets != t.tets:
            row["problem"] = f"{m.where(i)}: face or tetrahedron count is not the manifest's"
            return row, mesh
        rep = verify(data, strict=strict, path=m.tile_path(i), progress=progress)
        read_sidecar(sidecar_path(m, i), m, i)      # a stale or damaged .query: FormatError
    except RegnError as e:
        row["problem"] = str(e)
        return row, None
    failed = [c.name for c in rep.checks if c.status == "fail"]
    row["ok"] = rep.ok
    if not rep.ok:
        row["problem"] = f"{m.where(i)}: checks fail: {', '.join(failed)}"
    return row, mesh


def verify_world(path, *, strict=False, progress=None) -> WorldReport:
    """The :class:`WorldReport` of the world whose manifest is ``path``
    (FormatError when the manifest itself cannot be read).
    ``progress(phase, fraction)``, when given, hears "tile k of n" through
    each tile's checks, then "links"."""
    m = read_manifest(path)
    report = WorldReport(str(path), strict)
    meshes = {}
    n = len(m.tiles)
    for i in range(n):
        def tile_progress(_phase, frac, i=i):
            progress(f"tile {i + 1} of {n}", (i + frac) / (n + 1))
        row, mesh = _tile(m, i, strict, tile_progress if progress is not None else None)
        report.tiles.append(row)
        if row["ok"]:
            meshes[i] = mesh
    for li, lk in enumerate(m.links):
        if progress is not None:
            progress("links", (n + li / len(m.links)) / (n + 1))
        row = {"link": li, "a": m.tiles[lk.a].id, "b": m.tiles[lk.b].id, "ok": False,
               "problem": None}
        report.links.append(row)
        if lk.a not in meshes or lk.b not in meshes:
            row["problem"] = f"links[{li}]: a tile it joins did not pass"
            continue
        found = link_faces(meshes[lk.a], meshes[lk.b], lk.axis, lk.plane)
        got = {tuple(p) for p in lk.faces.tolist()}
        want = {tuple(p) for p in found.tolist()}
        if got != want:
            bad = sorted(got - want)[:1] or sorted(want - got)[:1]
            row["problem"] = (f"{path}: links[{li}] ({row['a']} - {row['b']}): faces do not "
                              f"match: {len(got - want)} listed pairs are not the same "
                              f"triangle, {len(want - got)} shared triangles unlisted "
                              f"(first {list(bad[0])})")
            continue
        nodes = np.flatnonzero(m.node_link == li)
        if any(tuple(m.node_faces[n]) not in got for n in nodes):
            row["problem"] = f"{path}: links[{li}]: a portal node is not on a linked face"
            continue
        row["ok"] = True
    return report


__all__ = ["verify_world", "WorldReport", "FormatError"]
