"""``regn.verify``: every statement of the format spec, checked on one object.

``verify(mesh_or_bytes, strict=False)`` returns a :class:`VerifyReport` with
one :class:`Check` per statement of ``docs/format.md``. Each check has a
stable snake_case name, the spec's mark as its ``kind``:

* ``seed`` — established by the research notes; always required for ``ok``;
* ``inferred`` — our reading; required only with ``strict=True`` (a failure
  on a real file means the reading is wrong, not necessarily the file);
* ``info`` — a measured rate or a value worth showing, never required;

and counts (``passed`` of ``total`` records, pairs or words). A failing
check's ``detail`` names the first offending records and what was seen there.

Tolerances (all in float64 on the stored float32 values):

* :data:`UNIT_TOL` — ``| |n| - 1 |`` for face normals (float32 normalising
  gives ~1e-7; 1e-5 leaves room for another writer's arithmetic).
* :data:`GEOM_REL` — distances (plane residuals, centre/radius, portal costs)
  relative to the map's scale ``max(|bbox min|, |bbox max|, extent)``: 1e-5,
  about 160 float32 ulps at that scale, ~0.9 m on a +-50 km map. A real
  error (a moved vertex, a wrong cost) is metres to kilometres.

Everything is vectorised or compiled: with numba, the per-record work runs in
the kernels of :mod:`regn.checks._kernels` and :mod:`regn._geometry_nb` (one
pass over the raw records each, several at once on background threads), which
give the numpy implementations' answers exactly — the numpy code is the
reference and runs without numba (or with ``regn.geometry.USE_NUMBA = False``);
``tests/test_verify_equivalence.py`` compares the two on corrupted objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError
from ..format import pof0 as _pof0
from ..format.layout import (ALIGN, FACE_SENTINELS, HEADER_SIZE, NO_SLOT, NO_TET,
                             PORTAL_PAIRS, SECTION_NAMES, STRIDES, align)
from .. import geometry as _geom
from ..geometry import cell_bounds, degenerate_threshold, grid_membership, signed_volumes
from ..tolerances import DEGENERATE_REL

#: Interim switch (part C removed regn.geometry.USE_NUMBA): False runs the
#: numpy implementations of the checks; part A deletes it with them.
USE_NUMBA = True

#: ``| |n| - 1 |`` allowed for a stored face normal.
UNIT_TOL = 1e-5
#: Distance tolerance relative to the map's scale (see the module docstring).
GEOM_REL = 1e-5
#: How many offending records a failing detail lists.
SHOW = 5

#: Every check, in report order: (name, kind). Names are stable.
CHECKS = (
    ('chunk_tags', 'seed'),
    ('chunk_sizes', 'seed'),
    ('chunk_flags_zero', 'seed'),
    ('chunk_reserved_bytes', 'info'),
    ('pof0_decodes', 'seed'),
    ('pof0_canonical', 'info'),
    ('pof0_pointer_set', 'seed'),
    ('section0_at_0x80', 'seed'),
    ('section_spans', 'seed'),
    ('section_alignment', 'seed'),
    ('face_sentinels', 'seed'),
    ('padding_zero', 'inferred'),
    ('data_area_end', 'inferred'),
    ('header_extent', 'seed'),
    ('header_cell_count', 'seed'),
    ('header_bbox_w', 'seed'),
    ('header_unknown_words', 'info'),
    ('cell_counts', 'seed'),
    ('cell_count_pointer', 'seed'),
    ('items_one_cell_each', 'seed'),
    ('items_in_cell_order', 'seed'),
    ('refs_packed', 'seed'),
    ('refs_all_used', 'inferred'),
    ('item_n_positive', 'seed'),
    ('refs_on_tet_boundaries', 'seed'),
    ('item_pointers_on_boundaries', 'seed'),
    ('item_refs_on_boundaries', 'seed'),
    ('item_cell_index_field', 'info'),
    ('vertices_in_bbox', 'inferred'),
    ('face_normals_unit', 'seed'),
    ('face_point_on_plane', 'seed'),
    ('face_w_one', 'seed'),
    ('face_own_index', 'seed'),
    ('face_tet_a_slot', 'seed'),
    ('faces_listed_once_or_twice', 'seed'),
    ('face_tet_b_slot', 'inferred'),
    ('face_zero_field', 'inferred'),
    ('tet_volume_nonzero', 'seed'),
    ('tet_orientation_positive', 'inferred'),
    ('face_plane_through_tet', 'seed'),
    ('face_normal_out_of_a', 'inferred'),
    ('tet_centre_radius', 'inferred'),
    ('portal_cost_rule', 'inferred'),
    ('portal_cost_identity_rate', 'info'),
    ('tet_unknown_fields', 'info'),
    ('listed_tets_intersect_cell', 'inferred'),
    ('sphere_reaches_cell_rate', 'info'),
    ('tet_listed_by_centre_cell', 'inferred'),
    ('grid_membership_exact', 'inferred'),
    ('roundtrip_identical', 'info'),
)

__all__ = ["verify", "VerifyReport", "Check", "CHECKS", "UNIT_TOL", "GEOM_REL"]


@dataclass
class Check:
    name: str
    kind: str          # 'seed' | 'inferred' | 'info'
    status: str        # 'pass' | 'fail' | 'info'
    passed: int
    total: int
    detail: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "status": self.status,
                "passed": int(self.passed), "total": int(self.total),
                "detail": self.detail}


@dataclass
class VerifyReport:
    path: str | None
    strict: bool
    checks: list = field(default_factory=list)
    byte_order: str = "big"
    pof0_dialect: int | None = None
    pof0_note: str = ""
    roundtrip_identical: bool = False
    first_difference: int | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Every required check passes (seed always; inferred when strict)."""
        need = ("seed", "inferred") if self.strict else ("seed",)
        return all(c.status != "fail" for c in self.checks if c.kind in need)

    @property
    def failed(self) -> list:
        """The checks that failed (any kind)."""
        return [c for c in self.checks if c.status == "fail"]

    def check(self, name) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def __getitem__(self, name) -> Check:
        return self.check(name)

    def to_dict(self) -> dict:
        return {"path": self.path, "ok": bool(self.ok), "byte_order": self.byte_order,
                "pof0_dialect": self.pof0_dialect,
                "roundtrip_identical": bool(self.roundtrip_identical),
                "checks": [c.to_dict() for c in self.checks]}


# --- small helpers -----------------------------------------------------------------

def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.7g}"
    if isinstance(v, np.ndarray):
        return "[" + ", ".join(_fmt(x) for x in v.ravel()) + "]"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _list(idx, describe, what) -> str:
    """'<n> <what> fail: first: <describe(i)>, ...'."""
    idx = np.asarray(idx).ravel()
    shown = "; ".join(describe(int(i)) for i in idx[:SHOW])
    more = f" (+{len(idx) - SHOW} more)" if len(idx) > SHOW else ""
    return f"{len(idx)} {what}: {shown}{more}"


class _Checks:
    def __init__(self):
        self.items = []

    def add(self, name, kind, passed, total, detail=""):
        ok = passed == total
        status = "info" if kind == "info" else ("pass" if ok else "fail")
        self.items.append(Check(name, kind, status, int(passed), int(total), detail))

    def mask(self, name, kind, bad, describe, what, ok_detail=""):
        """A check over records: ``bad`` marks the failing ones."""
        bad = np.asarray(bad, dtype=bool).ravel()
        idx = np.flatnonzero(bad)
        total = len(bad)
        detail = _list(idx, describe, what) if len(idx) else ok_detail
        self.add(name, kind, total - len(idx), total, detail)

    def info(self, name, passed, total, detail):
        self.add(name, "info", passed, total, detail)


def _where(parts, byte):
    """Data-relative byte -> 'section[record]+off' (for POF0 reports)."""
    byte = int(byte)
    if byte < HEADER_SIZE:
        return f"header+{byte:#x}"
    for k in range(5, -1, -1):
        off = parts.section_offsets[k]
        if byte >= off:
            rel = byte - off
            rec, within = divmod(rel, STRIDES[k])
            n = parts.counts[k]
            tail = "" if rec < n else " (past the section's records)"
            return f"{SECTION_NAMES[k]}[{rec}]+{within:#x}{tail}"
    return f"{byte:#x}"


def _sorted_unique(a):
    a = np.sort(np.asarray(a, dtype=np.int64))
    if len(a) < 2:
        return a
    return a[np.concatenate([[True], a[1:] != a[:-1]])]


def _dot3(a, b):
    """Dot product over a last axis of 3 (einsum's order of additions), without
    einsum's slow small-axis loops."""
    return (a[..., 0] * b[..., 0] + a[..., 2] * b[..., 2]) + a[..., 1] * b[..., 1]


def _norm3(a):
    """``np.linalg.norm(a, axis=-1)`` for a last axis of 3 (same arithmetic)."""
    x, y, z = a[..., 0], a[..., 1], a[..., 2]
    return np.sqrt((x * x + y * y) + z * z)


def _in_sorted(sorted_arr, x):
    """Membership of each ``x`` in the ascending ``sorted_arr`` (sort-based)."""
    x = np.asarray(x, dtype=np.int64)
    if len(sorted_arr) == 0:
        return np.zeros(len(x), dtype=bool)
    i = np.minimum(np.searchsorted(sorted_arr, x), len(sorted_arr) - 1)
    return sorted_arr[i] == x


# --- the entry point ----------------------------------------------------------------

def verify(mesh_or_bytes, *, strict=False, path=None) -> VerifyReport:
    """Run every check of the spec on a :class:`~regn.Mesh` or REGN bytes.

    Bytes are parsed with :func:`regn.loads` (a :class:`FormatError` — the
    object cannot be read at all — propagates). A built mesh (no bytes behind
    it) is checked as the bytes it writes. ``strict`` makes [inferred] checks
    required for :attr:`VerifyReport.ok`.
    """
    import time
    from ..io import loads
    from ..mesh import Mesh

    t0 = time.perf_counter()
    if isinstance(mesh_or_bytes, Mesh):
        mesh = mesh_or_bytes
        path = path if path is not None else mesh.path
        original = mesh.object_bytes()
        mesh = loads(original, path=path)
    else:
        original = bytes(mesh_or_bytes)
        mesh = loads(original, path=path)
    mesh.check_records()   # index ranges; a FormatError here propagates
    report = VerifyReport(path=None if path is None else str(path), strict=strict)
    report.byte_order = "big" if mesh.byte_order == ">" else "little"
    c = _Checks()
    # with numba, the compiled geometry kernels (the grid rule's pairs, the
    # longest piece of work, in two halves; the face and tetrahedron arrays)
    # run on background threads without the GIL while the other checks run,
    # and so does the round trip's re-encoding (numpy copies, mostly without
    # the GIL); each is joined where its result is used. ``mesh`` is verify's
    # own copy, so the private caches the checks leave on it are not seen.
    jobs = _geometry_jobs(mesh)
    _structure(mesh, c, report)
    again = _Job(_reencode, mesh, report.pof0_dialect, _known_table(mesh),
                 background=_threaded(mesh))
    _header(mesh, c)
    _grid_records(mesh, c)
    _geometry(mesh, c, jobs)
    _roundtrip(mesh, original, c, report, again)
    report.checks = c.items
    report.seconds = time.perf_counter() - t0
    return report


# --- structural: chunks, POF0, sections ---------------------------------------------

def _structure(mesh, c, report):
    parts = mesh.parts
    fr = parts.frame
    ch, ph = fr.chunk_header, fr.pof0_header
    tags_ok = (bytes(ch["tag"]) == b"REGN") + (bytes(ph["tag"]) == b"POF0")
    c.add("chunk_tags", "seed", tags_ok, 2,
          f"REGN chunk tag {bytes(ch['tag'])!r}, POF0 chunk tag {bytes(ph['tag'])!r}")
    c.add("chunk_sizes", "seed", 2, 2,
          f"data area {fr.data_size:#x} bytes, POF0 chunk at {fr.pof0_start - fr.start:#x} "
          f"(= 0x10 + size), table {fr.pof0_size:#x} bytes")
    flags = [int(ch["flags"]), int(ph["flags"])]
    c.add("chunk_flags_zero", "seed", sum(f == 0 for f in flags), 2,
          f"flags byte REGN={flags[0]:#04x} POF0={flags[1]:#04x}")
    reserved = [bytes(np.asarray(ch["reserved"], np.uint8)).hex(),
                bytes(np.asarray(ph["reserved"], np.uint8)).hex()]
    c.info("chunk_reserved_bytes", sum(r == "00" * 7 for r in reserved), 2,
           f"REGN reserved {reserved[0]}, POF0 reserved {reserved[1]}")

    # POF0 ------------------------------------------------------------------------
    from ..format.reader import expected_pointer_words, read_pof0
    offs = parts.section_offsets
    cell_ptr = parts.sections["cells"]["item_ptr"].astype(np.int64)
    expected = expected_pointer_words(offs, cell_ptr != 0, mesh.n_items, mesh.n_refs)
    table = None
    try:
        table = read_pof0(parts, expected, walk=_kernel("pof0_walk"))
    except FormatError as e:
        c.add("pof0_decodes", "seed", 0, 1, f"neither dialect decodes the table: {e}")
        c.info("pof0_canonical", 0, 1, "the table does not decode")
    if table is not None:
        report.pof0_dialect = int(table.dialect)
        if table.long_entries == 0:
            report.pof0_note = ("no long entries: both dialects read the table the same "
                                "way")
        else:
            report.pof0_note = f"{table.long_entries} long entries"
        c.add("pof0_decodes", "seed", 1, 1,
              f"{len(table.words)} words, dialect {table.dialect} "
              f"({report.pof0_note})")
        c.info("pof0_canonical", int(table.canonical), 1,
               "canonical" if table.canonical else "; ".join(table.notes))
        words = np.asarray(table.words, dtype=np.int64)
        step = np.diff(words)
        unsorted = int(np.count_nonzero(step < 0))
        if np.array_equal(words, expected):      # the usual case: nothing to list
            uw = words
            missing = extra = words[:0]
            mesh.__dict__["_pof0_exact"] = True  # (for the round trip's shortcut)
        else:
            uw = words if not np.any(step <= 0) else _sorted_unique(words)
            missing = expected[~_in_sorted(uw, expected)]
            extra = uw[~_in_sorted(expected, uw)]
        bits = []
        if len(missing):
            bits.append(_list(missing, lambda w: f"word {w} ({4 * w:#x}, "
                              f"{_where(parts, 4 * w)})", "expected pointer words not "
                              "listed"))
        if len(extra):
            data = np.frombuffer(parts.data, dtype=parts.byte_order + "u4",
                                 count=fr.data_size // 4)
            bits.append(_list(extra, lambda w: f"word {w} ({4 * w:#x}, "
                              f"{_where(parts, 4 * w)}) = {int(data[w]):#x}",
                              "extra words listed"))
        good = len(expected) - len(missing)
        c.add("pof0_pointer_set", "seed", good, len(expected) + len(extra),
              "; ".join(bits) if bits else
              f"exactly the {len(expected)} expected pointer words")
        if unsorted:
            c.items[-1].detail += f"; table not ascending at {unsorted} entries"
    else:
        report.pof0_dialect = None
        c.add("pof0_pointer_set", "seed", 0, len(expected), "the table does not decode")

    # sections --------------------------------------------------------------------
    counts = parts.counts
    size = fr.data_size
    c.add("section0_at_0x80", "seed", int(offs[0] == HEADER_SIZE), 1,
          f"section 0 at {offs[0]:#x}")
    ends = [offs[k] + counts[k] * STRIDES[k] + (FACE_SENTINELS * STRIDES[2] if k == 2
                                                 else 0) for k in range(6)]
    bad = [k for k in range(5) if ends[k] > offs[k + 1]]
    def _overlap(k):
        what = "runs to" if k != 2 else "with its two sentinels runs to"
        return (f"section {k} ({SECTION_NAMES[k]}) {what} {ends[k]:#x}, past section "
                f"{k + 1} at {offs[k + 1]:#x}")
    c.add("section_spans", "seed", 5 - len(bad), 5,
          "; ".join(_overlap(k) for k in bad) if bad else "sections in order: " +
          ", ".join(f"{k}:{offs[k]:#x}+{counts[k]}x{STRIDES[k]}" for k in range(6)))
    mis = [k for k in range(6) if offs[k] % ALIGN]
    c.add("section_alignment", "seed", 6 - len(mis), 6,
          "; ".join(f"section {k} at {offs[k]:#x}" for k in mis) if mis else
          "all six sections on 16-byte boundaries")
    data = np.frombuffer(parts.data, dtype=np.uint8)
    s_lo = offs[2] + counts[2] * STRIDES[2]
    sent = data[s_lo:s_lo + FACE_SENTINELS * STRIDES[2]]
    nz = np.flatnonzero(sent)
    short = FACE_SENTINELS * STRIDES[2] - len(sent)
    if short or len(nz):
        det = f"{len(nz)} non-zero bytes in the sentinels at {s_lo:#x}: " + ", ".join(
            f"+{int(i):#x}={int(sent[i]):#04x}" for i in nz[:SHOW])
        if short:
            det += f"; data area ends {short} bytes before the sentinels do"
        if ends[2] > offs[3]:
            det += f"; section 3 starts at {offs[3]:#x}, inside them"
        c.add("face_sentinels", "seed", 0, 1, det)
    else:
        c.add("face_sentinels", "seed", 1, 1,
              f"two all-zero 48-byte records at {s_lo:#x}")
    gap = _uncovered(size, [(0, HEADER_SIZE)] +
                     [(offs[k], min(ends[k], size)) for k in range(6)])
    c.mask("padding_zero", "inferred", data[gap] != 0,
           lambda i: f"{int(gap[i]):#x}={int(data[gap[i]]):#04x}",
           "non-zero padding bytes", f"{len(gap)} padding bytes, all zero")
    want = align(ends[5], ALIGN)
    c.add("data_area_end", "inferred", int(size == want), 1,
          f"data area is {size:#x} bytes; 16-aligned end of section 5 is {want:#x}")


def _uncovered(size, spans):
    """Ascending byte positions of 0..size-1 outside every span [a, b)."""
    runs, pos = [], 0
    for a, b in sorted((max(0, int(a)), min(int(b), size)) for a, b in spans):
        if b <= a:
            continue
        if a > pos:
            runs.append(np.arange(pos, a, dtype=np.int64))
        pos = max(pos, b)
    if pos < size:
        runs.append(np.arange(pos, size, dtype=np.int64))
    return np.concatenate(runs) if runs else np.zeros(0, np.int64)


# --- header ---------------------------------------------------------------------------

def _header(mesh, c):
    h = mesh.header
    lo = np.asarray(h["bbox_min"], np.float64)
    hi = np.asarray(h["bbox_max"], np.float64)
    ext = np.asarray(h["extent"], np.float64)
    cell = np.asarray(h["cell_size"], np.float64)
    dims = np.asarray(h["dims"], np.float64)
    diff = hi[:3] - lo[:3]
    prod = cell * dims
    bad = (ext != diff) | (ext != prod)
    axes = "xyz"
    c.mask("header_extent", "seed", bad,
           lambda k: f"{axes[k]}: extent {_fmt(ext[k])}, max-min {_fmt(diff[k])}, "
                     f"cell*dims {_fmt(prod[k])}", "axes where extent != max-min == "
           "cell*dims", f"extent {_fmt(ext)} == max-min == cell*dims")
    nx, ny, nz = (int(d) for d in h["dims"])
    n_c = int(h["counts"][3])
    c.add("header_cell_count", "seed", int(n_c == nx * ny * nz), 1,
          f"counts[3] = {n_c}, nx*ny*nz = {nx}*{ny}*{nz} = {nx * ny * nz}")
    w = [float(lo[3]), float(hi[3])]
    c.add("header_bbox_w", "seed", sum(x == 1.0 for x in w), 2,
          f"bbox min w = {_fmt(w[0])}, max w = {_fmt(w[1])}")
    unk = {"extent_w": int(h["extent_w"]), "cell_size_w": int(h["cell_size_w"]),
           "dims_w": int(h["dims_w"]), "reserved_5c": int(h["reserved_5c"]),
           "reserved_78": [int(x) for x in h["reserved_78"]]}
    flat = [v for x in unk.values() for v in (x if isinstance(x, list) else [x])]
    c.info("header_unknown_words", sum(v == 0 for v in flat), len(flat),
           ", ".join(f"{k}={_hex(v)}" for k, v in unk.items()))


def _hex(v):
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:#010x}" for x in v) + "]"
    return f"{v:#010x}"


# --- sections 3-5: the grid's records ----------------------------------------------------

def _grid_records(mesh, c):
    parts = mesh.parts
    offs = parts.section_offsets
    cells = parts.sections["cells"]
    items = parts.sections["items"]
    refs = parts.sections["refs"]
    cnt = cells["count"].astype(np.int64)
    ptr = cells["item_ptr"].astype(np.int64)
    c.mask("cell_counts", "seed", (cnt != 0) & (cnt != 1),
           lambda i: f"cell {i} count {cnt[i]}", "cells with a count not 0 or 1")
    c.mask("cell_count_pointer", "seed", (cnt == 1) != (ptr != 0),
           lambda i: f"cell {i} count {cnt[i]} item pointer {ptr[i]:#x}",
           "cells where count==1 and pointer!=0 disagree")
    ci = mesh.cell_item
    occ = np.flatnonzero(ci >= 0)
    per_item = np.bincount(ci[occ], minlength=mesh.n_items)
    c.mask("items_one_cell_each", "seed", per_item != 1,
           lambda i: f"item {i} pointed to by {per_item[i]} cells", "items not pointed "
           "to by exactly one cell")
    want = np.arange(len(occ))
    order_bad = ci[occ] != want
    c.mask("items_in_cell_order", "seed", order_bad,
           lambda k: f"occupied cell {occ[k]} (#{k}) points to item {ci[occ[k]]}",
           "occupied cells out of item order")
    n = items["n"].astype(np.int64)
    start = mesh.item_ref_start
    packed = np.concatenate([[0], np.cumsum(n)[:-1]]) if len(n) else n
    c.mask("refs_packed", "seed", start != packed,
           lambda i: f"item {i} refs at reference {start[i]}, packing gives {packed[i]}",
           "items whose refs are not packed in cell order")
    used = int(n.sum())
    c.add("refs_all_used", "inferred", int(used == mesh.n_refs), 1,
          f"items use {used} references, section 5 has {mesh.n_refs}")
    c.mask("item_n_positive", "seed", n < 1, lambda i: f"item {i} n = {n[i]}",
           "items with n < 1")
    tp = refs["tet_ptr"].astype(np.int64) - offs[1]
    c.mask("refs_on_tet_boundaries", "seed", tp % 96 != 0,
           lambda i: f"ref {i} -> {int(tp[i] + offs[1]):#x} (+{int(tp[i] % 96)} into "
                     f"tet {int(tp[i] // 96)})", "references not on a 96-byte record "
           "boundary")
    ip = ptr - offs[4]
    ibad = (ptr != 0) & (ip % 32 != 0)
    c.mask("item_pointers_on_boundaries", "seed", ibad,
           lambda i: f"cell {i} -> {int(ptr[i]):#x} (+{int(ip[i] % 32)} into item "
                     f"{int(ip[i] // 32)})", "cell item pointers not on a 32-byte "
           "record boundary")
    rp = items["refs_ptr"].astype(np.int64) - offs[5]
    c.mask("item_refs_on_boundaries", "seed", rp % 4 != 0,
           lambda i: f"item {i} refs -> {int(rp[i] + offs[5]):#x}",
           "item refs pointers not on a 4-byte boundary")
    cidx = items["cell_index"].astype(np.int64)
    expect_ci = np.full(mesh.n_items, -1, np.int64)
    ok_items = ci[occ] < mesh.n_items
    expect_ci[ci[occ][ok_items]] = occ[ok_items]
    same = int(np.count_nonzero(cidx == expect_ci))
    c.info("item_cell_index_field", same, mesh.n_items,
           "item +0x18 equals its cell's linear index (builder convention)")


# --- geometry ---------------------------------------------------------------------------------

class _Job:
    """``fn(*args)`` on a background thread (``result()`` joins it and
    re-raises its exception), or later on the caller's thread."""

    def __init__(self, fn, *args, background=True):
        self._fn, self._args = fn, args
        self._out = self._err = None
        self._thread = None
        if background:
            import threading
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self):
        try:
            self._out = self._fn(*self._args)
        except BaseException as e:      # re-raised on the caller's thread
            self._err = e

    def result(self):
        if self._thread is None:
            return self._fn(*self._args)
        self._thread.join()
        if self._err is not None:
            raise self._err
        return self._out


#: Below this many tetrahedra verify runs everything on the caller's thread
#: (starting threads costs more than the work they would overlap).
THREADS_MIN_TETS = 2000


def _threaded(mesh) -> bool:
    """Run the compiled kernels on background threads: numba is in use and
    the map is big enough for it to pay."""
    return mesh.n_tets >= THREADS_MIN_TETS and _kernel("face_arrays") is not None


def _decode_records(mesh):
    """Fill the mesh's cached arrays of sections 1 and 2 (tets, tet_faces,
    tet_points, tet_centres, tet_radii, portal_costs, face_normals, face_d,
    face_points) in one compiled pass over each section's raw words: the same
    values the properties compute, faster. Without numba it does nothing
    (the properties compute them on first use). Returns the tetrahedra whose
    +0x50..+0x5F words are not all zero, or None."""
    if "_nonzero_tail" in mesh.__dict__:
        return mesh.__dict__["_nonzero_tail"]
    tet_records = _kernel("tet_records")
    face_floats = _kernel("face_floats")
    if tet_records is None or face_floats is None:
        return None
    from ..mesh import _frozen
    order = mesh.byte_order
    tw = _section_words(mesh.sections["tets"], order)
    out = tet_records(tw, tw.view(np.float32), np.ascontiguousarray(mesh.vertices),
                      order == ">")
    for name, a in zip(("tets", "tet_faces", "tet_points", "tet_centres", "tet_radii",
                        "portal_costs"), out[:6]):
        mesh.__dict__.setdefault(name, _frozen(a))
    fw = _section_words(mesh.sections["faces"], order)
    for name, a in zip(("face_normals", "face_d", "face_points"),
                       face_floats(fw.view(np.float32))):
        mesh.__dict__.setdefault(name, _frozen(a))
    mesh.__dict__["_nonzero_tail"] = out[6]
    mesh.__dict__["_face_words"] = fw
    return out[6]


def _membership_job(mesh):
    """:func:`grid_membership` of the mesh's tetrahedra, as a :class:`_Job`:
    on a big map with the compiled kernel (nogil), in two halves on two
    background threads (the same pairs: the halves are joined in tetrahedron
    order and sorted by cell), else inline when asked for."""
    split = None
    if _threaded(mesh):
        split = _geom.grid_membership_split(mesh.tet_points, mesh.bbox_min,
                                            mesh.cell_size, mesh.dims, parts=2)
    if split is None:
        return _Job(grid_membership, mesh.tet_points, mesh.bbox_min, mesh.cell_size,
                    mesh.dims, background=False)
    pieces, finish = split

    def run():        # on a background thread: one half here, one on another
        other = _Job(pieces[0])
        mine = pieces[1]()
        return finish([other.result(), mine])
    return _Job(run)


def _geometry_jobs(mesh):
    """The compiled kernels of the geometry checks that need nothing but the
    records, started on background threads (they release the GIL) while the
    other checks run: the grid rule's pairs (in two halves), the face
    arrays, the tetrahedron arrays. Without numba they run later, inline."""
    _decode_records(mesh)
    background = _threaded(mesh)
    nrm, d, tf = mesh.face_normals, mesh.face_d, mesh.tet_faces
    return {"membership": _membership_job(mesh),
            "faces": _Job(_face_arrays, mesh, mesh.sections["faces"], nrm, d, tf,
                          background=background),
            "tets": _Job(_tet_arrays, mesh.tet_points, nrm, d, tf,
                         background=background)}


def _geometry(mesh, c, jobs=None):
    if jobs is None:
        jobs = _geometry_jobs(mesh)
    membership = jobs["membership"]
    v = mesh.vertices
    lo, hi = mesh.bbox_min, mesh.bbox_max
    scale = float(max(np.abs(lo).max(), np.abs(hi).max(), (hi - lo).max(), 1.0))
    tol = GEOM_REL * scale
    out = np.any((v < lo) | (v > hi), axis=1)
    c.mask("vertices_in_bbox", "inferred", out,
           lambda i: f"vertex {i} at {_fmt(v[i])}", "vertices outside the bbox "
           f"{_fmt(lo)}..{_fmt(hi)}")

    faces = mesh.sections["faces"]
    nrm = mesh.face_normals
    d = mesh.face_d
    tf = mesh.tet_faces
    n_t = mesh.n_tets
    arrays = jobs["faces"].result()
    nlen, res, bad_w, bad_own, bad_a, bad_b, bad_z, listed, other, ta, sa = arrays
    fp = _Lazy(lambda: mesh.face_points)
    w = _Lazy(lambda: faces["w"].astype(np.int64))
    own = _Lazy(lambda: faces["own"].astype(np.int64))
    tb = _Lazy(lambda: faces["tet_b"].astype(np.int64))
    sb = _Lazy(lambda: faces["slot_b"].astype(np.int64))
    z = _Lazy(lambda: faces["zero"].astype(np.int64))
    two = listed == 2
    c.mask("face_normals_unit", "seed", ~(np.abs(nlen - 1.0) <= UNIT_TOL),
           lambda f: f"face {f} |n| = {nlen[f]:.7g} (n = {_fmt(nrm[f])})",
           f"faces with | |n|-1 | > {UNIT_TOL:g}")
    c.mask("face_point_on_plane", "seed", ~(np.abs(res) <= tol),
           lambda f: f"face {f} n.p+d = {res[f]:.4g} m (p = {_fmt(fp[f])}, d = "
                     f"{_fmt(d[f])})", f"faces with |n.p+d| > {tol:.3g} m")
    c.mask("face_w_one", "seed", bad_w,
           lambda f: f"face {f} +0x1C = {int(w[f]):#010x}", "faces whose +0x1C is not "
           "1.0f")
    c.mask("face_own_index", "seed", bad_own,
           lambda f: f"face {f} own = {own[f]}", "faces whose own index is not their "
           "record index")
    c.mask("face_tet_a_slot", "seed", bad_a,
           lambda f: f"face {f}: A = tet {ta[f]} slot {sa[f]}, which lists face "
                     f"{tf[ta[f], sa[f]]}", "faces f with tet[A].faces[slot_a] != f")
    c.mask("faces_listed_once_or_twice", "seed", (listed < 1) | (listed > 2),
           lambda f: f"face {f} listed by {listed[f]} tetrahedra", "faces not listed "
           "by one or two tetrahedra")
    # B/slot_b [inferred]: second lister on interior faces, NO_TET/0xFF on boundary
    c.mask("face_tet_b_slot", "inferred", bad_b,
           lambda f: f"face {f} (listed {listed[f]}x): B = "
                     f"{'NO_TET' if tb[f] == NO_TET else tb[f]} slot "
                     f"{'0xFF' if sb[f] == NO_SLOT else sb[f]}"
                     + (f", expected tet {other[f] // 4} slot {other[f] % 4}"
                        if two[f] else ", expected NO_TET/0xFF"),
           "faces whose B/slot_b is not the other tetrahedron (NO_TET/0xFF on the "
           "boundary)")
    c.mask("face_zero_field", "inferred", bad_z,
           lambda f: f"face {f} +0x2E = {int(z[f]):#06x}", "faces with a non-zero +0x2E")

    # tetrahedra ----------------------------------------------------------------
    pts = mesh.tet_points
    vol, thr, off, third, opp, mean, rad, want = jobs["tets"].result()
    centre = mesh.tet_centres
    radius = mesh.tet_radii
    pc = mesh.portal_costs                                    # (T,6,2)
    (bad_vol, bad_orient, bad_plane, s_out, bad_out, bad_cr, want_aux, bad_pc, same,
     aux0, home) = _tet_checks(mesh, vol, thr, third, off, ta, sa, mean, rad, centre,
                               radius, want, pc, listed, tf, tol)

    def dist(t, k):          # n.v+d of slot k's face plane at each vertex of t
        f = tf[t, k]
        return _dot3(nrm[f][None, :], pts[t]) + d[f]
    c.mask("tet_volume_nonzero", "seed", bad_vol,
           lambda t: f"tet {t} verts {mesh.tets[t].tolist()} volume {vol[t]:.4g} m^3",
           "degenerate tetrahedra")
    c.mask("tet_orientation_positive", "inferred", bad_orient,
           lambda t: f"tet {t} verts {mesh.tets[t].tolist()} signed volume "
                     f"{vol[t]:.4g} m^3", "tetrahedra with signed volume <= 0")

    c.mask("face_plane_through_tet", "seed", bad_plane,
           lambda i: f"tet {i // 4} slot {i % 4} face {tf[i // 4, i % 4]}: vertex "
                     f"distances {_fmt(dist(i // 4, i % 4))} m",
           f"(tet, slot) pairs whose face plane misses 3 of the 4 vertices by > "
           f"{tol:.3g} m")
    c.mask("face_normal_out_of_a", "inferred", bad_out,
           lambda f: f"face {f}: A's off-plane vertex at n.v+d = {s_out[f]:.4g} m "
                     f"(should be < 0)", "faces whose normal does not point out of A")

    c.mask("tet_centre_radius", "inferred", bad_cr,
           lambda t: f"tet {t}: centre {_fmt(centre[t])} vs mean {_fmt(mean[t])}, "
                     f"radius {_fmt(radius[t])} vs {_fmt(rad[t])}",
           f"tetrahedra whose centre/radius differ from the vertex mean / max distance "
           f"by > {tol:.3g} m")

    # portal costs -----------------------------------------------------------------
    cost, aux = pc[..., 0], pc[..., 1]
    c.mask("portal_cost_rule", "inferred", bad_pc,
           lambda i: f"tet {i // 6} pair {PORTAL_PAIRS[i % 6]}: (cost, aux) = "
                     f"({_fmt(cost.ravel()[i])}, {_fmt(aux.ravel()[i])}), rule gives "
                     f"({_fmt(want.ravel()[i])}, {_fmt(want_aux.ravel()[i])})",
           "(tet, pair) portal costs off the rule cost=|c_i-c_j|, aux=0 at a "
           "boundary else cost")
    c.info("portal_cost_identity_rate", same, cost.size,
           f"aux == cost in {same} of {cost.size} pairs; aux == 0 in {aux0}")
    tz = mesh.sections["tets"]
    fa = _Lazy(lambda: tz["field_a"].astype(np.int64))
    fb = _Lazy(lambda: tz["field_b"].astype(np.int64))
    zw = _Lazy(lambda: tz["zero"].astype(np.int64))
    nzt = _decode_records(mesh)
    if nzt is None:
        nzt = (fa[:] != 0) | (fb[:] != 0) | np.any(zw[:] != 0, axis=1)
    c.info("tet_unknown_fields", n_t - int(nzt.sum()), n_t,
           _list(np.flatnonzero(nzt), lambda t: f"tet {t} A={fa[t]:#x} B={fb[t]:#x} "
                 f"zero={_hex(zw[t].tolist())}", "tetrahedra with a non-zero +0x50..+0x5F")
           if nzt.any() else "+0x50..+0x5F zero in every tetrahedron")

    # grid ----------------------------------------------------------------------------
    cell = mesh.cell_size
    dims = mesh.dims
    indptr, ref_t = mesh.grid_csr
    ref_c = np.repeat(np.arange(mesh.n_cells), np.diff(indptr))
    exp_c, exp_t = membership.result()
    stride = max(n_t, 1)
    hit, missing, extra, listed_home, dupes = _grid_compare(
        indptr, ref_c, ref_t, exp_c, exp_t, home, n_t, stride)
    c.mask("listed_tets_intersect_cell", "inferred", ~hit,
           lambda r: f"cell {ref_c[r]} lists tet {ref_t[r]}, which does not meet it",
           "(cell, tet) references whose tetrahedron misses the cell box")
    # sphere rate
    n_reach = _sphere_reach(centre, radius, ref_c, ref_t, lo, cell, dims, mesh.n_cells)
    c.info("sphere_reaches_cell_rate", n_reach, len(ref_t),
           f"tet sphere (centre, radius) reaches its listed cell in "
           f"{100.0 * n_reach / len(ref_t) if len(ref_t) else 100.0:.1f} % of "
           f"references")
    # centre cell lists the tet
    c.mask("tet_listed_by_centre_cell", "inferred", ~listed_home,
           lambda t: f"tet {t} (vertex mean {_fmt(mean[t])}) not listed by cell "
                     f"{home[t]}, which lists {int(indptr[home[t] + 1] - indptr[home[t]])}"
                     f" tets", "tetrahedra missing from the cell holding their centre")
    # the builder's exact rule
    n_exp = len(exp_t)
    bits = []
    if len(missing):
        bits.append(_list(missing, lambda k: f"cell {k // stride} lacks tet "
                          f"{k % stride}", "intersecting (cell, tet) pairs not "
                          "listed"))
    if len(extra):
        bits.append(_list(extra, lambda k: f"cell {k // stride} lists tet "
                          f"{k % stride}", "listed pairs that do not intersect"))
    if dupes:
        bits.append(f"{dupes} duplicate references")
    c.add("grid_membership_exact", "inferred",
          n_exp - len(missing), n_exp + len(extra) + dupes,
          "; ".join(bits) if bits else
          f"every cell lists exactly the {n_exp} (cell, tet) pairs that meet it")


class _Lazy:
    """An array computed on first indexing (values only detail text needs)."""

    def __init__(self, fn):
        self._fn, self._a = fn, None

    def __getitem__(self, i):
        if self._a is None:
            self._a = self._fn()
        return self._a[i]


def _section_words(sec, order):
    """(N, stride/4) native uint32 words of a section's records (a copy)."""
    n = len(sec)
    if n == 0:
        return np.zeros((0, sec.dtype.itemsize // 4), np.uint32)
    return np.ascontiguousarray(sec).view(order + "u4").reshape(n, -1).astype(np.uint32)


def _face_arrays(mesh, faces, nrm, d, tf):
    """Per-face arrays of the face checks: nlen |n|, res n.p+d, the failing
    records of face_w_one, face_own_index, face_tet_a_slot, face_tet_b_slot,
    face_zero_field, listed (how many tetrahedra list each face), other (the
    lister 4*tet+slot that is not A, on faces listed twice; else -1), ta, sa.
    Compiled with numba when it imports (one pass over the raw records),
    numpy otherwise."""
    n_t, n_f = mesh.n_tets, mesh.n_faces
    kernel = _kernel("face_arrays")
    if kernel is not None:
        fw = mesh.__dict__.get("_face_words")
        if fw is None:
            fw = _section_words(faces, mesh.byte_order)
        return kernel(fw, fw.view(np.float32), np.ascontiguousarray(tf, np.int64),
                      int(n_t), mesh.byte_order == ">")
    fp = mesh.face_points
    nlen = np.linalg.norm(nrm, axis=1)
    res = np.einsum("ij,ij->i", nrm, fp) + d
    w = faces["w"].astype(np.int64)
    own = faces["own"].astype(np.int64)
    ta = faces["tet_a"].astype(np.int64)
    sa = faces["slot_a"].astype(np.int64)
    tb = faces["tet_b"].astype(np.int64)
    sb = faces["slot_b"].astype(np.int64)
    bad_a = tf[ta, sa] != np.arange(n_f) if n_f else np.zeros(0, bool)
    listed = np.bincount(tf.ravel(), minlength=n_f)
    flat = tf.ravel()
    order = np.argsort(flat, kind="stable")
    fs_sorted = flat[order]
    first = np.searchsorted(fs_sorted, np.arange(n_f))
    other = np.full(n_f, -1, np.int64)          # the lister that is not (A, slot_a)
    two = listed == 2
    p0 = order[np.minimum(first, max(len(order) - 1, 0))] if len(order) else first
    p1 = order[np.minimum(first + 1, max(len(order) - 1, 0))] if len(order) else first
    a_pos = 4 * ta + sa
    other[two] = np.where(p0[two] == a_pos[two], p1[two], p0[two])
    b_pos = np.where(tb == NO_TET, -1, 4 * np.minimum(tb, n_t) + np.minimum(sb, 3))
    bnd = listed == 1
    bad_b = np.where(bnd, (tb != NO_TET) | (sb != NO_SLOT),
                     np.where(two, (tb == NO_TET) | (b_pos != other), False))
    z = faces["zero"].astype(np.int64)
    return (nlen, res, w != 0x3F800000, own != np.arange(n_f), bad_a, bad_b, z != 0,
            listed, other, ta, sa)


def _tet_checks(mesh, vol, thr, third, off, ta, sa, mean, rad, centre, radius, want,
                pc, listed, tf, tol):
    """The comparisons of the tetrahedron and portal checks: bad_vol,
    bad_orient (T,), bad_plane (T,4), s_out, bad_out (F,), bad_cr (T,),
    want_aux, bad_pc (T,6), how many pairs have aux == cost and aux == 0,
    home (T,) the cell of each vertex mean. Compiled with numba when it
    imports, numpy otherwise."""
    n_t, n_f = len(vol), len(ta)
    kernel = _kernel("tet_checks")
    if kernel is not None:
        f64 = np.float64
        out = kernel(vol, thr, third, off, np.ascontiguousarray(ta, np.int64),
                     np.ascontiguousarray(sa, np.int64), mean, rad,
                     np.ascontiguousarray(centre, f64), np.ascontiguousarray(radius, f64),
                     want, np.ascontiguousarray(pc, f64), np.ascontiguousarray(listed, np.int64),
                     np.ascontiguousarray(tf, np.int64), np.array(PORTAL_PAIRS, np.int64),
                     float(tol), np.ascontiguousarray(mesh.bbox_min, f64),
                     np.ascontiguousarray(mesh.cell_size, f64),
                     np.asarray(mesh.dims, np.int64))
        return out[:8] + (int(out[8]), int(out[9]), out[10])
    bad_vol = ~(np.abs(vol) > thr)
    bad_orient = ~(vol > 0)
    bad_plane = ~(third <= tol)
    if n_f:
        s_out = off[ta, sa]
        bad_out = ~(s_out < 0)
    else:
        s_out = bad_out = np.zeros(0)
    cerr = _norm3(centre - mean)
    rerr = np.abs(radius - rad)
    bad_cr = ~((cerr <= tol) & (rerr <= tol))
    pairs = np.array(PORTAL_PAIRS)
    bslot = listed[tf] == 1                                   # (T,4)
    eb = bslot[:, pairs[:, 0]] | bslot[:, pairs[:, 1]]
    want_aux = np.where(eb, 0.0, want)
    cost, aux = pc[..., 0], pc[..., 1]
    bad_pc = ~((np.abs(cost - want) <= tol) & (np.abs(aux - want_aux) <= tol))
    same = int(np.count_nonzero(cost == aux))
    aux0 = int(np.count_nonzero(aux == 0))
    home = mesh.cell_of(mean) if n_t else np.zeros(0, np.int64)
    return (bad_vol, bad_orient, bad_plane, s_out, bad_out, bad_cr, want_aux, bad_pc,
            same, aux0, home)


def _tet_arrays(pts, nrm, d, tf):
    """Per-tetrahedron arithmetic of the tetrahedron checks: ``vol`` (T,)
    signed volumes, ``thr`` (T,) their degenerate thresholds, ``off`` (T,4)
    n.v+d of each slot's face plane at the slot's off-plane vertex, ``third``
    (T,4) the third smallest |n.v+d| over the four vertices, ``opp`` (T,4) the
    off-plane vertex (argmax |n.v+d|), ``mean`` (T,3) vertex mean, ``rad`` (T,)
    max vertex distance from the mean, ``want`` (T,6) distance between the
    portal pairs' face centroids. Compiled with numba when it imports (one
    pass, the same arithmetic), numpy otherwise."""
    n_t = len(pts)
    pairs = np.array(PORTAL_PAIRS, dtype=np.int64)
    kernel = None
    if n_t and len(nrm) and tf.min() >= 0 and tf.max() < len(nrm):
        kernel = _kernel("tet_arrays")
    if kernel is not None:
        vol, size, off, third, opp, mean, rad, want = kernel(
            np.ascontiguousarray(pts, np.float64), np.ascontiguousarray(nrm, np.float64),
            np.ascontiguousarray(d, np.float64), np.ascontiguousarray(tf, np.int64), pairs)
        return vol, DEGENERATE_REL * size ** 3, off, third, opp, mean, rad, want
    vol = signed_volumes(pts) if n_t else np.zeros(0)
    thr = degenerate_threshold(pts) if n_t else np.zeros(0)
    n_tk = nrm[tf]                                          # (T,4,3)
    d_tk = d[tf]                                            # (T,4)
    dist = _dot3(n_tk[:, :, None, :], pts[:, None, :, :]) + d_tk[:, :, None]   # (T,4,4)
    adist = np.abs(dist)
    third = np.sort(adist, axis=2)[:, :, 2] if n_t else np.zeros((0, 4))
    opp = np.argmax(adist, axis=2) if n_t else np.zeros((0, 4), np.int64)
    mean = (((pts[:, 0] + pts[:, 1]) + pts[:, 2]) + pts[:, 3]) / 4 if n_t else \
        np.zeros((0, 3))                                  # pts.mean(axis=1)
    vd = _norm3(pts - mean[:, None, :]) if n_t else np.zeros((0, 4))
    rad = np.maximum(np.maximum(vd[:, 0], vd[:, 1]), np.maximum(vd[:, 2], vd[:, 3]))
    keep = np.ones(adist.shape, bool)
    if n_t:
        tt, kk = np.meshgrid(np.arange(n_t), np.arange(4), indexing="ij")
        keep[tt, kk, opp] = False
    on = keep[..., None]
    fcent = pts[:, None, 0, :] * on[:, :, 0]               # (T,4,3) centroid per slot
    for v in range(1, 4):
        fcent = fcent + pts[:, None, v, :] * on[:, :, v]
    fcent = fcent / 3.0
    want = _norm3(fcent[:, pairs[:, 0]] - fcent[:, pairs[:, 1]])
    off = np.take_along_axis(dist, opp[:, :, None], axis=2)[:, :, 0]
    return vol, thr, off, third, opp, mean, rad, want


def _kernel(name):
    """A compiled kernel of :mod:`regn.checks._kernels`, or None (numba missing
    or broken, or switched off with ``regn.geometry.USE_NUMBA = False``)."""
    if not USE_NUMBA:
        return None
    try:
        from . import _kernels
    except Exception:            # numba missing or broken: numpy does the work
        return None
    return getattr(_kernels, name)


def _grid_compare(indptr, ref_c, ref_t, exp_c, exp_t, home, n_t, stride):
    """The file's references against the expected (cell, tet) pairs.

    Returns ``hit`` (R,) whether each reference is an expected pair,
    ``missing`` the sorted keys (cell * stride + tet) of expected pairs not
    listed, ``extra`` the sorted unique keys of listed pairs not expected,
    ``listed_home`` (T,) whether each tet's home cell ``home`` lists it, and
    the number of duplicate references."""
    grid_compare = _kernel("grid_compare")
    key_exp = exp_c * stride + exp_t
    key_file = ref_c * stride + ref_t
    if grid_compare is not None:
        hit, exp_listed, listed_home, dupes = grid_compare(
            np.ascontiguousarray(indptr, np.int64), np.ascontiguousarray(ref_t, np.int64),
            np.ascontiguousarray(exp_c, np.int64), np.ascontiguousarray(exp_t, np.int64),
            np.ascontiguousarray(home, np.int64), int(n_t))
        extra = _sorted_unique(key_file[~hit])
        return hit, key_exp[~exp_listed], extra, listed_home, int(dupes)
    hit = _in_sorted(key_exp, key_file)
    uk = _sorted_unique(key_file)
    hit_u = _in_sorted(key_exp, uk)
    key_home = home * stride + np.arange(n_t)
    listed_home = _in_sorted(uk, key_home)
    missing = key_exp[~_in_sorted(uk, key_exp)]
    return hit, missing, uk[~hit_u], listed_home, len(key_file) - len(uk)


def _sphere_reach(centre, radius, ref_c, ref_t, lo, cell, dims, n_cells) -> int:
    """How many references' tetrahedron sphere (stored centre, radius) reaches
    the closed box of the cell listing it (radius widened by 1e-6)."""
    if len(ref_t) == 0:
        return 0
    clo, chi = cell_bounds(np.arange(n_cells), lo, cell, dims)   # per cell, once
    sphere_reach = _kernel("sphere_reach")
    if sphere_reach is not None:
        return int(sphere_reach(np.ascontiguousarray(centre, np.float64),
                                np.ascontiguousarray(radius, np.float64),
                                np.ascontiguousarray(ref_c, np.int64),
                                np.ascontiguousarray(ref_t, np.int64), clo, chi))
    q = np.clip(centre[ref_t], clo[ref_c], chi[ref_c])
    return int(np.count_nonzero(_norm3(centre[ref_t] - q) <= radius[ref_t] * (1 + 1e-6)))


# --- round trip -------------------------------------------------------------------------------

def _known_table(mesh):
    """The read POF0 table's bytes when re-encoding must give exactly them:
    the sections sit at their canonical offsets (so the writer lists the
    pointer words the reader expected) and the table decoded, in its
    dialect, as the canonical encoding (shortest entries, canonical padding)
    of exactly those words. Else None (the writer encodes a table)."""
    from ..format.writer import canonical_offsets
    parts = mesh.parts
    t = parts._pof0
    if t is None or not t.canonical or mesh.__dict__.get("_pof0_exact") is not True:
        return None
    offs, _ = canonical_offsets(parts.counts)
    if tuple(int(o) for o in parts.section_offsets) != tuple(offs):
        return None
    return parts.pof0_body


def _reencode(mesh, dialect, table=None):
    """What ``mesh.dumps(pof0_dialect=dialect or 3)`` gives, with the compiled
    POF0 packer when numba imports, and without the final copy to bytes
    (``table``: see :func:`_known_table`)."""
    return mesh._serialize(pof0_dialect=dialect or _pof0.DIALECT_3,
                           pack=_kernel("pof0_pack"), as_bytearray=True, table=table)


def _roundtrip(mesh, original, c, report, again=None):
    if again is None:
        again = _Job(_reencode, mesh, report.pof0_dialect, background=False)
    try:
        again = again.result()
    except Exception as e:   # a LimitError or similar: say so, do not crash
        report.roundtrip_identical = False
        report.first_difference = 0
        c.info("roundtrip_identical", 0, 1, f"could not re-encode: {e}")
        return
    same = again == original
    report.roundtrip_identical = same
    if same:
        report.first_difference = None
        c.info("roundtrip_identical", 1, 1, f"re-encoding gives the same {len(original)} "
               "bytes")
        return
    n = min(len(again), len(original))
    a = np.frombuffer(original, np.uint8, count=n)
    b = np.frombuffer(again, np.uint8, count=n)
    neq = np.flatnonzero(a != b)
    first = int(neq[0]) if len(neq) else n
    report.first_difference = first
    c.info("roundtrip_identical", 0, 1,
           f"first difference at object offset {first:#x} "
           f"({len(original)} bytes read, {len(again)} re-encoded)")
