"""Compiled search loop of :mod:`regn.scan.finder`."""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..format.chunk import POF0_TAG
from ..format.layout import CHUNK_HEADER_SIZE, DATA_BASE

_P0, _P1, _P2, _P3 = POF0_TAG


@kernel(inline=True)
def _u32(blob, at, little):
    if little:
        return (np.int64(blob[at + 3]) << 24) | (np.int64(blob[at + 2]) << 16) | \
            (np.int64(blob[at + 1]) << 8) | np.int64(blob[at])
    return (np.int64(blob[at]) << 24) | (np.int64(blob[at + 1]) << 16) | \
        (np.int64(blob[at + 2]) << 8) | np.int64(blob[at + 3])


@kernel
def window_candidates(blob, lo, hi, tag_ok):
    """Starts in ``lo .. hi-1`` of ``blob`` (uint8) whose 4 bytes are tag
    bytes (``tag_ok``, a 256-entry table; no leading space) and whose size
    field, big- or else little-endian, puts a ``POF0`` chunk header whose
    table ends inside ``blob`` where it says. -> (starts int64, little bool),
    ascending; a start is listed once, big-endian when both orders fit."""
    n = len(blob)
    starts = np.empty(hi - lo, np.int64)
    little = np.empty(hi - lo, np.bool_)
    k = 0
    for s in range(lo, hi):
        if blob[s] == 0x20 or not (tag_ok[blob[s]] and tag_ok[blob[s + 1]]
                                   and tag_ok[blob[s + 2]] and tag_ok[blob[s + 3]]):
            continue
        for le in (False, True):
            pof = s + DATA_BASE + _u32(blob, s + 4, le)
            if pof + CHUNK_HEADER_SIZE > n:
                continue
            if blob[pof] != _P0 or blob[pof + 1] != _P1 or blob[pof + 2] != _P2 \
                    or blob[pof + 3] != _P3:
                continue
            if pof + CHUNK_HEADER_SIZE + _u32(blob, pof + 4, le) > n:
                continue
            starts[k] = s
            little[k] = le
            k += 1
            break
    return starts[:k].copy(), little[:k].copy()
