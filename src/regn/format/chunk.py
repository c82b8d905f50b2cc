"""Chunk headers and the REGN + POF0 object frame.

An object is a chunk (16-byte header, then ``size`` bytes of data area)
followed directly by a POF0 chunk whose body is the pointer table [seed].
This module finds that frame in a byte buffer and works out the byte order;
it knows nothing about what is inside the data area.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from .layout import BIG, CHUNK_HEADER_SIZE, DATA_BASE, LITTLE, dtype_for

POF0_TAG = b"POF0"


@dataclass(frozen=True)
class Frame:
    """Where the parts of one object lie, as offsets into the buffer."""

    start: int            # object offset 0 in the buffer
    tag: bytes
    byte_order: str       # '>' or '<'
    data_size: int        # the REGN chunk's size field
    pof0_size: int        # the POF0 chunk's size field
    chunk_header: np.void  # the REGN chunk header record (file byte order)
    pof0_header: np.void

    @property
    def data_start(self) -> int:
        return self.start + DATA_BASE

    @property
    def pof0_start(self) -> int:
        return self.start + DATA_BASE + self.data_size

    @property
    def table_start(self) -> int:
        return self.pof0_start + CHUNK_HEADER_SIZE

    @property
    def end(self) -> int:
        """One past the POF0 body: the end of the object proper."""
        return self.table_start + self.pof0_size


def read_u32(buf, offset: int, order: str) -> int:
    return int(np.frombuffer(buf, dtype=order + "u4", count=1, offset=offset)[0])


def frame_at(buf, start: int = 0, *, expect_tag: bytes | None = None) -> Frame:
    """Find the chunk + POF0 frame of the object at ``start``.

    The byte order is the one in which the chunk's size field puts ``POF0``
    exactly where it says (big-endian tried first). Raises FormatError saying
    which field does not fit.
    """
    n = len(buf)
    avail = n - start
    if avail < CHUNK_HEADER_SIZE:
        raise FormatError(f"{avail} bytes is too short for a chunk header "
                          f"(16 bytes)", offset=start if avail else None)
    tag = bytes(buf[start:start + 4])
    if expect_tag is not None and tag != expect_tag:
        raise FormatError(f"tag is {tag!r}, expected {expect_tag!r}", offset=start)
    sizes = {order: read_u32(buf, start + 4, order) for order in (BIG, LITTLE)}
    found = None
    for order in (BIG, LITTLE):
        pof = start + DATA_BASE + sizes[order]
        if pof + CHUNK_HEADER_SIZE <= n and bytes(buf[pof:pof + 4]) == POF0_TAG:
            found = order
            break
    if found is None:
        be = start + DATA_BASE + sizes[BIG]
        if be + CHUNK_HEADER_SIZE > n and start + DATA_BASE + sizes[LITTLE] + \
                CHUNK_HEADER_SIZE > n:
            raise FormatError(
                f"chunk size {sizes[BIG]:#x} (big-endian) puts the POF0 chunk at "
                f"{be - start:#x}, past the end of the {avail}-byte object; "
                f"little-endian {sizes[LITTLE]:#x} does not fit either",
                offset=start + 4)
        raise FormatError(
            f"no POF0 chunk where the chunk size {sizes[BIG]:#x} says "
            f"(offset {be - start:#x}); little-endian size does not fit either",
            offset=start + 4)
    order = found
    pof0_start = start + DATA_BASE + sizes[order]
    pof0_size = read_u32(buf, pof0_start + 4, order)
    if pof0_start + CHUNK_HEADER_SIZE + pof0_size > n:
        raise FormatError(
            f"POF0 size {pof0_size:#x} runs past the end of the object "
            f"({n - pof0_start - CHUNK_HEADER_SIZE} bytes left)",
            offset=pof0_start + 4, section="POF0")
    hdr_dt = dtype_for("chunk_header", order)
    chunk_header = np.frombuffer(buf, dtype=hdr_dt, count=1, offset=start)[0]
    pof0_header = np.frombuffer(buf, dtype=hdr_dt, count=1, offset=pof0_start)[0]
    return Frame(start, tag, order, sizes[order], pof0_size, chunk_header,
                 pof0_header)
