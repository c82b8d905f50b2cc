"""The round trip: re-encoding the object gives its bytes back."""

from __future__ import annotations

import numpy as np

from ..format import pof0 as _pof0
from ..format.writer import canonical_offsets
from ._report import Outcome, Part
from .chunk import pof0

PART = Part("round trip")


def _known_table(run):
    """The read POF0 table's bytes when re-encoding must give exactly them:
    the sections sit at their canonical offsets (so the writer lists the
    pointer words the reader expected) and the table decoded, in its
    dialect, as the canonical encoding (shortest entries, canonical padding)
    of exactly those words. Else None (the writer encodes a table)."""
    facts = run.fact(pof0)
    parts = run.mesh.parts
    if facts.table is None or not facts.table.canonical or not facts.exact:
        return None
    offs, _ = canonical_offsets(parts.counts)
    if tuple(int(o) for o in parts.section_offsets) != tuple(offs):
        return None
    return parts.pof0_body


def reencoded(run):
    """What ``mesh.dumps()`` gives (in the dialect read, 3 when the table
    does not decode), as the buffer it was built in, or the exception that
    stopped it."""
    table = run.fact(pof0).table
    dialect = table.dialect if table is not None else _pof0.DIALECT_3
    try:
        return run.mesh._serialize(pof0_dialect=dialect, as_bytearray=True,
                                   table=_known_table(run))
    except Exception as e:       # a LimitError or similar: reported, not raised
        return e


def first_difference(run) -> int | None:
    """Object offset of the first byte the re-encoding changes (None: none)."""
    again, original = run.fact(reencoded), run.original
    if isinstance(again, Exception):
        return 0
    if again == original:
        return None
    n = min(len(again), len(original))
    neq = np.flatnonzero(np.frombuffer(original, np.uint8, count=n)
                         != np.frombuffer(again, np.uint8, count=n))
    return int(neq[0]) if len(neq) else n


@PART.check("roundtrip_identical", "info", "re-encoding gives the same bytes")
def _(run):
    again, original = run.fact(reencoded), run.original
    if isinstance(again, Exception):
        return Outcome(0, 1, f"could not re-encode: {again}")
    first = run.fact(first_difference)
    if first is None:
        return Outcome(1, 1, f"re-encoding gives the same {len(original)} bytes")
    return Outcome(0, 1, f"first difference at object offset {first:#x} "
                         f"({len(original)} bytes read, {len(again)} re-encoded)")
