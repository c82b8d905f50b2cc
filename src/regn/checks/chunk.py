"""The frame, the POF0 table and where the sections lie (docs/format.md:
"The frame", "The POF0 table", "Sections", "What the POF0 table of a REGN
lists")."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import FormatError
from ..format.chunk import POF0_TAG
from ..format.layout import (ALIGN, DATA_BASE, FACE_SENTINELS, HEADER_SIZE, SECTION,
                             SECTION_NAMES, STRIDES, WORD, align)
from ..format.reader import REGN_TAG, expected_pointer_words, read_pof0
from ._report import SHOW, Outcome, Part, listing, outcome_of

PART = Part("chunk, POF0 and sections")


# --- the frame ---------------------------------------------------------------------------

@PART.check("chunk_tags", "seed", "the chunks are tagged REGN and POF0")
def _(run):
    fr = run.mesh.parts.frame
    tags = bytes(fr.chunk_header["tag"]), bytes(fr.pof0_header["tag"])
    return Outcome((tags[0] == REGN_TAG) + (tags[1] == POF0_TAG), 2,
                   f"REGN chunk tag {tags[0]!r}, POF0 chunk tag {tags[1]!r}")


@PART.check("chunk_sizes", "seed", "the POF0 chunk follows the data area")
def _(run):
    fr = run.mesh.parts.frame                     # (reading found it there)
    return Outcome(2, 2, f"data area {fr.data_size:#x} bytes, POF0 chunk at "
                         f"{fr.pof0_start - fr.start:#x} (= {DATA_BASE:#x} + size), "
                         f"table {fr.pof0_size:#x} bytes")


@PART.check("chunk_flags_zero", "seed", "flags byte 0 (not relocated) in both chunks")
def _(run):
    fr = run.mesh.parts.frame
    flags = [int(fr.chunk_header["flags"]), int(fr.pof0_header["flags"])]
    return Outcome(sum(f == 0 for f in flags), 2,
                   f"flags byte REGN={flags[0]:#04x} POF0={flags[1]:#04x}")


@PART.check("chunk_reserved_bytes", "info", "the 7 reserved header bytes [unknown]")
def _(run):
    fr = run.mesh.parts.frame
    reserved = [bytes(np.asarray(h["reserved"], np.uint8)).hex()
                for h in (fr.chunk_header, fr.pof0_header)]
    return Outcome(sum(r == "00" * 7 for r in reserved), 2,
                   f"REGN reserved {reserved[0]}, POF0 reserved {reserved[1]}")


# --- the POF0 table ------------------------------------------------------------------------

class Pof0Facts(NamedTuple):
    """The table as read (None when neither dialect decodes it, ``error``
    then says why), the pointer words a REGN must list, and whether the
    table lists exactly them in order."""

    table: object
    error: FormatError | None
    expected: np.ndarray
    exact: bool

    @property
    def note(self) -> str:
        if self.table is None:
            return ""
        if self.table.long_entries == 0:
            return "no long entries: both dialects read the table the same way"
        return f"{self.table.long_entries} long entries"


def pof0(run) -> Pof0Facts:
    """The POF0 table decoded, the dialect chosen as the spec says."""
    mesh = run.mesh
    parts = mesh.parts
    cell_ptr = parts.sections["cells"]["item_ptr"]
    expected = expected_pointer_words(parts.section_offsets, cell_ptr != 0, mesh.n_items,
                                      mesh.n_refs)
    try:
        table = read_pof0(parts, expected)
    except FormatError as e:
        return Pof0Facts(None, e, expected, False)
    exact = bool(np.array_equal(np.asarray(table.words, np.int64), expected))
    return Pof0Facts(table, None, expected, exact)


@PART.check("pof0_decodes", "seed", "the table decodes in one of the dialects")
def _(run):
    p = run.fact(pof0)
    if p.table is None:
        return Outcome(0, 1, f"neither dialect decodes the table: {p.error}")
    return Outcome(1, 1, f"{len(p.table.words)} words, dialect {p.table.dialect} "
                         f"({p.note})")


@PART.check("pof0_canonical", "info", "the table is in the canonical encoding")
def _(run):
    t = run.fact(pof0).table
    if t is None:
        return Outcome(0, 1, "the table does not decode")
    return Outcome(int(t.canonical), 1, "canonical" if t.canonical else "; ".join(t.notes))


@PART.check("pof0_pointer_set", "seed",
            "the table lists exactly the header's section pointers, the non-zero cell "
            "item pointers, every item's refs pointer and every reference")
def _(run):
    p = run.fact(pof0)
    expected = p.expected
    if p.table is None:
        return Outcome(0, len(expected), "the table does not decode")
    parts = run.mesh.parts
    words = np.asarray(p.table.words, dtype=np.int64)
    step = np.diff(words)
    if p.exact:                                   # the usual case: nothing to list
        missing = extra = words[:0]
    else:
        uw = words if not np.any(step <= 0) else np.unique(words)
        missing = expected[~np.isin(expected, uw)]
        extra = uw[~np.isin(uw, expected)]
    bits = []
    if len(missing):
        bits.append(listing(missing, lambda w: f"word {w} ({WORD * w:#x}, "
                            f"{_where(parts, WORD * w)})", "expected pointer words not "
                            "listed"))
    if len(extra):
        data = parts.data_words
        bits.append(listing(extra, lambda w: f"word {w} ({WORD * w:#x}, "
                            f"{_where(parts, WORD * w)}) = {int(data[w]):#x}",
                            "extra words listed"))
    detail = "; ".join(bits) if bits else \
        f"exactly the {len(expected)} expected pointer words"
    unsorted = int(np.count_nonzero(step < 0))
    if unsorted:
        detail += f"; table not ascending at {unsorted} entries"
    return Outcome(len(expected) - len(missing), len(expected) + len(extra), detail)


def _where(parts, byte):
    """Data-relative byte -> 'section[record]+off' (for POF0 reports)."""
    byte = int(byte)
    if byte < HEADER_SIZE:
        return f"header+{byte:#x}"
    for k in range(len(SECTION_NAMES) - 1, -1, -1):
        off = parts.section_offsets[k]
        if byte >= off:
            rec, within = divmod(byte - off, STRIDES[k])
            tail = "" if rec < parts.counts[k] else " (past the section's records)"
            return f"{SECTION_NAMES[k]}[{rec}]+{within:#x}{tail}"
    return f"{byte:#x}"


# --- where the sections lie ------------------------------------------------------------------

def section_ends(run) -> list:
    """Data-relative end of each section's records (section 2 with its
    sentinels)."""
    parts = run.mesh.parts
    offs, counts = parts.section_offsets, parts.counts
    faces = SECTION["faces"]
    return [offs[k] + counts[k] * STRIDES[k] + (FACE_SENTINELS * STRIDES[k] if k == faces
                                                 else 0) for k in range(len(offs))]


@PART.check("section0_at_0x80", "seed", "section 0 starts right after the header")
def _(run):
    first = run.mesh.parts.section_offsets[0]
    return Outcome(int(first == HEADER_SIZE), 1, f"section 0 at {first:#x}")


@PART.check("section_spans", "seed", "each section ends before the next begins")
def _(run):
    parts = run.mesh.parts
    offs, counts = parts.section_offsets, parts.counts
    ends = run.fact(section_ends)
    bad = [k for k in range(5) if ends[k] > offs[k + 1]]

    def overlap(k):
        what = "with its two sentinels runs to" if k == SECTION["faces"] else "runs to"
        return (f"section {k} ({SECTION_NAMES[k]}) {what} {ends[k]:#x}, past section "
                f"{k + 1} at {offs[k + 1]:#x}")
    return Outcome(5 - len(bad), 5, "; ".join(overlap(k) for k in bad) if bad else
                   "sections in order: " + ", ".join(
                       f"{k}:{offs[k]:#x}+{counts[k]}x{STRIDES[k]}" for k in range(6)))


@PART.check("section_alignment", "seed", "sections begin on 16-byte boundaries")
def _(run):
    offs = run.mesh.parts.section_offsets
    mis = [k for k in range(6) if offs[k] % ALIGN]
    return Outcome(6 - len(mis), 6, "; ".join(f"section {k} at {offs[k]:#x}" for k in mis)
                   if mis else "all six sections on 16-byte boundaries")


@PART.check("face_sentinels", "seed", "two all-zero face records follow section 2")
def _(run):
    parts = run.mesh.parts
    k = SECTION["faces"]
    span = FACE_SENTINELS * STRIDES[k]
    data = np.frombuffer(parts.data, dtype=np.uint8)
    at = parts.section_offsets[k] + parts.counts[k] * STRIDES[k]
    sentinels = data[at:at + span]
    nz = np.flatnonzero(sentinels)
    short = span - len(sentinels)
    if not short and not len(nz):
        return Outcome(1, 1, f"two all-zero {STRIDES[k]}-byte records at {at:#x}")
    detail = f"{len(nz)} non-zero bytes in the sentinels at {at:#x}: " + ", ".join(
        f"+{int(i):#x}={int(sentinels[i]):#04x}" for i in nz[:SHOW])
    if short:
        detail += f"; data area ends {short} bytes before the sentinels do"
    nxt = parts.section_offsets[k + 1]
    if run.fact(section_ends)[k] > nxt:
        detail += f"; section {k + 1} starts at {nxt:#x}, inside them"
    return Outcome(0, 1, detail)


@PART.check("padding_zero", "inferred", "padding between sections is zero")
def _(run):
    parts = run.mesh.parts
    size = parts.frame.data_size
    ends = run.fact(section_ends)
    gap = _uncovered(size, [(0, HEADER_SIZE)] + [(parts.section_offsets[k], min(ends[k], size))
                                                  for k in range(6)])
    data = np.frombuffer(parts.data, dtype=np.uint8)
    return outcome_of(data[gap] != 0, lambda i: f"{int(gap[i]):#x}={int(data[gap[i]]):#04x}",
                      "non-zero padding bytes", f"{len(gap)} padding bytes, all zero")


@PART.check("data_area_end", "inferred", "the data area ends at the 16-aligned end of "
            "section 5")
def _(run):
    size = run.mesh.parts.frame.data_size
    want = align(run.fact(section_ends)[-1], ALIGN)
    return Outcome(int(size == want), 1,
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
