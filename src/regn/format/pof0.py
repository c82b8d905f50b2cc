"""POF0 pointer-offset tables: decode, canonical encode, and relocation.

A POF0 table is a byte stream of entries whose first byte's top two bits give
the entry length and whose remaining bits (big-endian) are a delta in 4-byte
words added to a running word index that starts at 0 and is never reset
[seed: the loader's ``apply_pof0``]. ``00`` ends the table (padding).

Two dialects disagree about the long (``11``) entry: this title's loader takes
3 bytes / 22 bits (the seed reading, :data:`DIALECT_3`); the public tools of
the same family take 4 bytes / 30 bits (:data:`DIALECT_4`). Short entries are
the same in both.

The table itself is always a big-endian byte stream, in either byte order of
the object it describes.
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError

DIALECT_3 = 3
DIALECT_4 = 4
DIALECTS = (DIALECT_3, DIALECT_4)

_ONE, _TWO, _LONG = 0x40, 0x80, 0xC0


def max_delta(length: int, dialect: int = DIALECT_3) -> int:
    """Largest word delta an entry of ``length`` bytes can hold."""
    bits = {1: 6, 2: 14, 3: 22, 4: 30}[length]
    if length >= 3 and length != dialect:
        raise ValueError(f"dialect {dialect} has no {length}-byte entries")
    return (1 << bits) - 1


class Pof0Table:
    """A decoded table: the word indices it lists, plus how it was spelt.

    ``words`` are word indices into the data area (pointer at byte 4·word),
    in table order. ``canonical`` is False when an entry used a longer form
    than it needed or the padding is not what the writer would emit.
    ``long_entries`` counts ``11`` entries (0 means both dialects read the
    table the same way).
    """

    __slots__ = ("words", "dialect", "canonical", "long_entries", "end", "notes")

    def __init__(self, words, dialect, canonical, long_entries, end, notes):
        self.words = words
        self.dialect = dialect
        self.canonical = canonical
        self.long_entries = long_entries
        self.end = end
        self.notes = notes


def _entry_starts(length: np.ndarray, n: int):
    """Byte positions where entries start, following the chain from byte 0.

    Vectorised by pointer doubling: ``nxt`` maps each byte to the byte after
    the entry starting there (``n`` at the end marker, ``n + 1`` past the
    table); the set of positions 2^k..2^(k+1)-1 entries from 0 is the image of
    the previous set under the k-th power of ``nxt``. O(n log n), no loop
    over entries.
    """
    pos = np.arange(n, dtype=np.int64)
    nxt = np.empty(n + 2, dtype=np.int64)
    nxt[:n] = np.where(length == 0, n, np.minimum(pos + length, n + 1))
    nxt[n:] = (n, n + 1)
    # pos + length == n is a clean end, > n an overrun
    over = (pos + length > n) & (length > 0)
    nxt[:n][over] = n + 1
    reached = np.array([0], dtype=np.int64)    # positions 0 .. 2^k - 1 entries on
    jump = nxt                                  # nxt applied 2^k times
    overrun = False
    while True:
        # the positions 2^k .. 2^(k+1)-1 entries on; sentinels (>= n) end the chain
        step = jump[reached]
        overrun |= bool(np.any(step == n + 1))
        step = step[step < n]
        if not len(step):
            break
        reached = np.concatenate([reached, step])
        jump = jump[jump]
    # no sort needed: block k holds the positions 2^k..2^(k+1)-1 entries on,
    # in step order, and positions grow along the chain, so ``reached`` is
    # already ascending
    if n == 0:
        reached = reached[:0]
    chain = reached[reached < n]
    is_entry = length[chain] > 0
    starts = chain[is_entry]
    stop = chain[~is_entry]
    end = int(stop[0]) if len(stop) else (n if not overrun else n)
    return starts, end, overrun


def _walk(buf, dialect):
    """The entry chain of table ``buf`` (uint8), vectorised: -> starts (byte
    positions of the entries), deltas (None after an overrun), end (where
    the chain stops), overrun (the last entry runs past the table), longer
    (entries longer than their delta needs), long_entries (3- or 4-byte
    entries). :func:`regn.checks._kernels.pof0_walk` is the compiled loop
    with the same results."""
    by_kind = np.array([0, 1, 2, dialect], dtype=np.int64)
    length = by_kind[buf >> 6]          # entry length if one started at each byte
    starts, end, overrun = _entry_starts(length, len(buf))
    if overrun:
        return starts, None, end, True, 0, 0
    lens = length[starts]
    deltas = buf[starts].astype(np.int64) & 0x3F
    for k in range(1, dialect):
        more = lens > k
        idx = np.where(more, starts + k, 0)
        deltas = np.where(more, (deltas << 8) | buf[idx].astype(np.int64), deltas)
    shortest = np.where(deltas <= 0x3F, 1, np.where(deltas <= 0x3FFF, 2, dialect))
    return (starts, deltas, end, False, int(np.sum(shortest != lens)),
            int(np.sum(lens >= 3)))


def decode(table: bytes, dialect: int = DIALECT_3, *, base_offset: int = 0,
           data_words: int | None = None, walk=None) -> Pof0Table:
    """Decode a POF0 body into the word indices it lists.

    ``base_offset`` is the object offset of the table's first byte (used only
    in error messages). When ``data_words`` is given, every listed word must be
    below it (inside the data area). Raises :class:`FormatError` on a repeated
    word (a delta of 0 after the first entry), a first delta of 0, an entry
    that runs past the table, or a word outside the data area.

    ``walk`` replaces :func:`_walk` (``regn.verify`` passes the compiled
    :func:`regn.checks._kernels.pof0_walk`, with the same results).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown POF0 dialect {dialect!r}")
    buf = np.frombuffer(table, dtype=np.uint8)
    n = len(buf)
    walk = walk or _walk
    # A valid table lists fewer words than the data area has, each entry at
    # most ``dialect`` bytes: its entries and end byte lie in the first
    # dialect * (data_words + 1) bytes. Only those are walked, so memory
    # follows the data area whatever the table's size. Past them the entries
    # already outnumber the data area's words: an error is found among them.
    scope = buf if data_words is None else buf[:dialect * (data_words + 1)]
    starts, deltas, end, overrun, longer, long_entries = walk(scope, dialect)
    if overrun and len(scope) < n:              # cut by the scope, not by the table
        scope = scope[:int(starts[-1])]
        starts, deltas, end, overrun, longer, long_entries = walk(scope, dialect)
    end = int(end)
    if overrun:
        last = int(starts[-1])
        need = dialect if buf[last] >> 6 == 3 else int(buf[last] >> 6)
        raise FormatError(
            f"POF0 entry at table byte {last} needs {need} bytes "
            f"but the table has {n - last} left",
            offset=base_offset + last, section="POF0")
    if len(deltas) and deltas[0] == 0:
        raise FormatError("POF0 first entry has delta 0 (word 0 is never a pointer)",
                          offset=base_offset, section="POF0")
    zero = np.flatnonzero(deltas[1:] == 0)
    if len(zero):
        at = int(starts[zero[0] + 1])
        raise FormatError("POF0 entry with delta 0 lists a word twice",
                          offset=base_offset + at, section="POF0")
    words = np.cumsum(deltas)
    if data_words is not None and len(words) and words[-1] >= data_words:
        bad = int(np.argmax(words >= data_words))
        raise FormatError(
            f"POF0 lists word {int(words[bad])} (byte {4 * int(words[bad]):#x}) "
            f"outside the {4 * data_words:#x}-byte data area",
            offset=base_offset + int(starts[bad]), section="POF0")
    # Canonical: each delta in its shortest form, then zeros to a multiple of 4.
    notes = []
    canonical = True
    if longer:
        canonical = False
        notes.append(f"{int(longer)} entries longer than needed")
    want_size = (end + 3) // 4 * 4
    if n != want_size or np.any(buf[end:]):
        canonical = False
        notes.append(f"table is {n} bytes after {end} bytes of entries; "
                     f"canonical padding gives {want_size}")
    return Pof0Table(words, dialect, canonical, int(long_entries), end, notes)


def encode(words, dialect: int = DIALECT_3, *, pack=None) -> bytes:
    """Canonical table for a set of word indices.

    Sorted ascending without repeats, each delta in its shortest form, zero
    bytes up to a multiple of 4. Raises ``ValueError`` when a delta is too
    large for the dialect or word 0 is listed. ``pack`` is an optional
    compiled byte packer (``regn.verify`` passes
    :func:`regn.checks._kernels.pof0_pack`; the same bytes).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown POF0 dialect {dialect!r}")
    w = np.sort(np.asarray(words, dtype=np.int64).ravel(), kind="stable")  # linear if sorted
    w = w[np.concatenate([[True], w[1:] != w[:-1]])] if len(w) else w
    if len(w) and w[0] <= 0:
        raise ValueError("POF0 cannot list word 0 (or a negative word)")
    deltas = np.diff(w, prepend=0)
    limit = (1 << (8 * dialect - 2)) - 1
    if len(deltas) and deltas.max() > limit:
        raise ValueError(f"a POF0 delta of {int(deltas.max())} words exceeds the "
                         f"{dialect}-byte dialect's {limit}")
    if pack is not None:
        return pack(np.ascontiguousarray(deltas, np.int64), dialect).tobytes()
    lens = np.where(deltas <= 0x3F, 1, np.where(deltas <= 0x3FFF, 2, dialect))
    total = int(lens.sum())
    out = np.zeros((total + 3) // 4 * 4, dtype=np.uint8)
    pos = np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64)
    tag = np.where(lens == 1, _ONE, np.where(lens == 2, _TWO, _LONG)).astype(np.int64)
    for k in range(dialect):
        has = lens > k
        shift = 8 * (lens - 1 - k)
        byte = (deltas >> np.where(has, shift, 0)) & 0xFF
        if k == 0:
            byte = byte | tag
        out[pos[has] + k] = byte[has]
    return out.tobytes()


def relocate(data: bytes, words, base: int, order: str = ">") -> np.ndarray:
    """What the loader does: add ``base`` to every listed non-zero word.

    Returns the data area as an array of u32 words (byte order ``order``)
    with the listed words relocated; ``data`` is not modified. Null pointers
    stay null [seed].
    """
    out = np.frombuffer(data, dtype=order + "u4", count=len(data) // 4).copy()
    w = np.asarray(words, dtype=np.int64)
    vals = out[w]
    out[w] = np.where(vals != 0, (vals.astype(np.uint64) + base) & 0xFFFFFFFF, 0)
    return out
