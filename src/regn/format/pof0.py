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

#: The top two bits of an entry's first byte: its kind (0 ends the table, 1
#: and 2 are 1- and 2-byte entries).
_END, _ONE, _LONG = 0, 1, 3
#: Payload bits of the first byte.
_LOW6 = 0x3F
#: Largest delta a 1-byte and a 2-byte entry hold.
_MAX1, _MAX2 = (1 << 6) - 1, (1 << 14) - 1


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


def _reach(nxt, first, n_nodes):
    """The nodes visited from node ``first`` along ``nxt`` (node -> next
    node; a value ``>= n_nodes`` ends the chain), ascending.

    Pointer doubling, so no Python loop over the chain: ``jump`` is ``nxt``
    applied 2^k times, and the nodes 2^k .. 2^(k+1)-1 steps on are the image
    of those fewer than 2^k steps on. Node numbers grow along the chain, so
    the visited nodes come out ascending.
    """
    if first >= n_nodes:
        return np.zeros(0, np.int64)
    jump = np.concatenate([nxt, [n_nodes, n_nodes + 1]])   # chain ends map to themselves
    reached = np.array([first], dtype=np.int64)
    while True:
        step = jump[reached]
        step = step[step < n_nodes]
        if not len(step):
            return reached
        reached = np.concatenate([reached, step])
        jump = jump[jump]


def _walk(buf, dialect):
    """The entry chain of table ``buf`` (uint8), vectorised.

    -> starts (byte positions of the entries), deltas (None after an
    overrun), end (where the chain stops: the first end byte, else the
    table's length), overrun (the last entry runs past the table), longer
    (entries longer than their delta needs), long_entries (3- or 4-byte).

    Entries tile the table from byte 0 to where the chain stops, and a
    1-byte entry is followed by the next byte: so the chain is only
    followed (by :func:`_reach`) over the bytes that could start a longer
    entry or end the table -- a handful in a REGN's table, where most deltas
    are small -- and every other byte up to the end is an entry start unless
    it lies inside a longer entry.
    """
    n = len(buf)
    kind = buf >> 6
    nodes = np.flatnonzero(kind != _ONE)            # bytes that are not 1-byte entries
    m = len(nodes)
    node_kind = kind[nodes]
    length = np.array([0, 1, 2, dialect], np.int64)[node_kind]
    after = nodes + length                          # where the next entry starts
    # the next node on the chain: the first at or after ``after`` (m: none, so
    # 1-byte entries run to the table's end), m + 1 past the table, and an
    # end byte stops the chain (m)
    nxt = np.searchsorted(nodes, after)
    nxt[after > n] = m + 1
    nxt[node_kind == _END] = m
    visited = _reach(nxt, 0, m)
    stop = visited[node_kind[visited] == _END]      # at most one: the last visited
    overrun = len(visited) > 0 and nxt[visited[-1]] == m + 1
    if len(stop):
        visited = visited[:-1]
    end = int(nodes[stop[0]]) if len(stop) else n
    is_entry = np.ones(end, bool)
    starts_long = nodes[visited]
    long_len = length[visited]
    for k in range(1, dialect):                     # the bytes inside longer entries
        inner = starts_long[long_len > k] + k
        is_entry[inner[inner < end]] = False
    starts = np.flatnonzero(is_entry)
    if overrun:
        return starts, None, end, True, 0, 0
    deltas = (buf[starts] & _LOW6).astype(np.int64)
    at = np.searchsorted(starts, starts_long)       # where the longer entries are
    value = deltas[at]
    for k in range(1, dialect):
        more = long_len > k
        value[more] = (value[more] << 8) | buf[starts_long[more] + k]
    deltas[at] = value
    longer = int(np.count_nonzero(_entry_lengths(value, dialect) != long_len))
    return starts, deltas, end, False, longer, int(np.count_nonzero(long_len > 2))


def decode(table: bytes, dialect: int = DIALECT_3, *, base_offset: int = 0,
           data_words: int | None = None) -> Pof0Table:
    """Decode a POF0 body into the word indices it lists.

    ``base_offset`` is the object offset of the table's first byte (used only
    in error messages). When ``data_words`` is given, every listed word must be
    below it (inside the data area). Raises :class:`FormatError` on a repeated
    word (a delta of 0 after the first entry), a first delta of 0, an entry
    that runs past the table, or a word outside the data area.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown POF0 dialect {dialect!r}")
    buf = np.frombuffer(table, dtype=np.uint8)
    n = len(buf)
    # A valid table lists fewer words than the data area has, each entry at
    # most ``dialect`` bytes: its entries and end byte lie in the first
    # dialect * (data_words + 1) bytes. Only those are walked, so memory
    # follows the data area whatever the table's size. Past them the entries
    # already outnumber the data area's words: an error is found among them.
    scope = buf if data_words is None else buf[:dialect * (data_words + 1)]
    starts, deltas, end, overrun, longer, long_entries = _walk(scope, dialect)
    if overrun and len(scope) < n:              # cut by the scope, not by the table
        scope = scope[:int(starts[-1])]
        starts, deltas, end, overrun, longer, long_entries = _walk(scope, dialect)
    if overrun:
        last = int(starts[-1])
        need = dialect if buf[last] >> 6 == _LONG else int(buf[last] >> 6)
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


def _entry_lengths(deltas, dialect):
    """The shortest entry length (bytes) of each delta."""
    return np.where(deltas <= _MAX1, 1, np.where(deltas <= _MAX2, 2, dialect))


def encode(words, dialect: int = DIALECT_3) -> bytes:
    """Canonical table for a set of word indices.

    Sorted ascending without repeats, each delta in its shortest form, zero
    bytes up to a multiple of 4. Raises ``ValueError`` when a delta is too
    large for the dialect or word 0 is listed.
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
    lens = _entry_lengths(deltas, dialect)
    ends = np.cumsum(lens)
    total = int(ends[-1]) if len(ends) else 0
    out = np.zeros((total + 3) // 4 * 4, dtype=np.uint8)
    # most entries are 1 byte: the kind bits and the delta in one go, then the
    # lower bytes of the longer entries, last byte first
    first = ends - lens
    out[first] = (np.minimum(lens, _LONG) << 6) | (deltas >> (8 * (lens - 1)))
    longer = np.flatnonzero(lens > 1)
    rest, at = deltas[longer], ends[longer]
    for k in range(1, dialect):
        more = lens[longer] > k
        out[at[more] - k] = rest[more] & 0xFF
        rest = rest >> 8
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
