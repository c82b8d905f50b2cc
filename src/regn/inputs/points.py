"""Point and segment lists: ``.npy`` files, or text (a file or stdin) read a
block at a time, so a command's memory does not grow with the input.

Text: one row a line, ``width`` numbers separated by blanks and/or commas.
Blank lines and lines starting with ``#`` are skipped; a UTF-8 byte-order
mark is skipped; the first line may be a header naming the columns (one
word a column, such as ``x,y,z``, none of them a number). A number is written as C's
``strtod`` reads it in decimal: ``-1e4``, ``.5``, ``nan``, ``-inf`` (not
``0x10``, not ``1_000``). Anything else is an error naming the line, and
so is a coordinate that is not finite (``nan``, ``inf``: a row of a point
list is a position, and a NaN there is a mistake upstream, not a point
outside the map); in an ``.npy``, naming the row.
"""

from __future__ import annotations

import io
import os
import re
import sys

import numpy as np

from .. import _atomic
from ..errors import QueryError
from .arrays import iter_npy_rows, open_npy
from .numbers import NUMBER

#: rows handed to a query at a time (.npy input).
CHUNK_ROWS = 1 << 16
#: bytes of text read at a time.
BLOCK_BYTES = 1 << 21
#: a longer line is not a row of numbers.
MAX_LINE_BYTES = 1 << 16

_BOM = b"\xef\xbb\xbf"
_HEADER_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLOAT_WORDS = {"nan", "inf", "infinity"}


def columns(width: int) -> str:
    return "x y z" if width == 3 else "x0 y0 z0 x1 y1 z1"


def iter_rows(source=None, width: int = 3, *, stream=None):
    """float64 (n, width) blocks of the rows of ``source`` (a path; ``.npy``
    by extension, else text), or of the text ``stream`` (stdin by default).
    Raises :class:`QueryError` naming the file (``<stdin>``) and line."""
    if source is not None and os.fspath(source).lower().endswith((".npy", ".npz")):
        npy = open_npy(source, kinds="iuf", what="point list")
        done = 0
        for rows in iter_npy_rows(npy, width, CHUNK_ROWS):
            bad = _first_non_finite(rows)
            if bad is not None:
                row, col = bad
                raise QueryError(f"{os.fspath(source)}: row {done + row} (from 0): "
                                 f"{_said(rows[row, col], width, col)}")
            done += len(rows)
            yield rows
        return
    if source is not None:
        name = os.fspath(source)
        try:
            fh = open(name, "rb")
        except OSError as e:
            raise QueryError(f"{name}: cannot read: {e.strerror or e}") from None
        _atomic.note_input(name)
        with fh:
            yield from _text_rows(_blocks(fh), name, width)
    else:
        stream = stream or sys.stdin
        yield from _text_rows(_blocks(getattr(stream, "buffer", stream)), "<stdin>", width)


def load_rows(source=None, width: int = 3, *, stream=None) -> np.ndarray:
    """Every row of :func:`iter_rows` as one (N, width) array (for commands
    that need them all at once: a picture of the points)."""
    blocks = list(iter_rows(source, width, stream=stream))
    return np.concatenate(blocks) if blocks else np.zeros((0, width))


def _blocks(fh):
    """Byte blocks of a binary or text stream."""
    while True:
        block = fh.read(BLOCK_BYTES)
        if not block:
            return
        yield block.encode("utf-8") if isinstance(block, str) else block


def _text_rows(blocks, name, width):
    """Whole lines of ``blocks`` parsed ``width`` numbers a line, one block
    of lines at a time."""
    carry = b""
    first = 1          # number of the first line in the pending text
    start = True       # line 1 not parsed yet
    for k, block in enumerate(blocks):
        text = carry + block
        if k == 0 and text.startswith(_BOM):
            text = text[len(_BOM):]
        cut = text.rfind(b"\n") + 1
        if not cut:
            carry = text
            if len(carry) > MAX_LINE_BYTES:
                raise QueryError(f"{name}: line {first} is longer than {MAX_LINE_BYTES} "
                                 f"bytes, not a row of {width} numbers")
            continue
        lines, carry = text[:cut], text[cut:]
        rows = _parse(lines, name, first, width, header_allowed=start)
        _check_finite(rows, lines, name, first, width, start)
        start = False
        first += lines.count(b"\n")
        if len(rows):
            yield rows
    if carry:
        rows = _parse(carry, name, first, width, header_allowed=start)
        _check_finite(rows, carry, name, first, width, start)
        if len(rows):
            yield rows


def _first_non_finite(rows):
    """(row, column) of the first NaN or infinity of ``rows``, or None (one
    np.isfinite over the block)."""
    ok = np.isfinite(rows)
    if ok.all():
        return None
    row = int(np.argmin(ok.all(axis=1)))
    return row, int(np.argmin(ok[row]))


def _said(value, width, col) -> str:
    return (f"{columns(width).split()[col]} is {float(value)!r}, not a finite coordinate")


def _check_finite(rows, data, name, first, width, header_allowed):
    """QueryError naming the line of the first non-finite number of
    ``rows`` (parsed from the whole lines ``data``, line ``first`` on)."""
    bad = _first_non_finite(rows)
    if bad is None:
        return
    row, col = bad
    lines = data.decode("utf-8").split("\n")
    skip = 1 if header_allowed and _is_header(lines[0], width) else 0
    seen = -1
    for lineno, raw in enumerate(lines[skip:], first + skip):
        line = raw.strip()
        if line and not line.startswith("#"):
            seen += 1
            if seen == row:
                raise QueryError(f"{name}: line {lineno}: {_said(rows[row, col], width, col)}")
    raise QueryError(f"{name}: row {row + 1} of a block: {_said(rows[row, col], width, col)}")


def _parse(data: bytes, name, first, width, *, header_allowed):
    """(n, width) float64 rows of whole lines ``data`` (line ``first``
    on): numpy's parser when the block is plain numbers, else line by line
    (which also words any error)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first + data[:e.start].count(b"\n")
        raise QueryError(f"{name}: line {line}: not UTF-8 text") from None
    if header_allowed:
        head, _, rest = text.partition("\n")
        if _is_header(head, width):
            text, first = rest, first + 1
    if not text.strip():
        return np.zeros((0, width))
    if "#" not in text:
        try:
            rows = np.loadtxt(io.StringIO(text.replace(",", " ")), dtype=np.float64,
                              comments=None, ndmin=2)
        except ValueError:
            pass
        else:
            if rows.shape[1] == width:
                return rows
    return _parse_lines(text, name, first, width)


def _parse_lines(text, name, first, width):
    rows = []
    for lineno, raw in enumerate(text.split("\n"), first):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.replace(",", " ").split()
        bad = next((f for f in fields if not NUMBER.fullmatch(f)), None)
        if bad is not None or len(fields) != width:
            shown = line if len(line) <= 60 else line[:57] + "..."
            why = (f"{bad!r} is not a number" if bad is not None
                   else f"{len(fields)} numbers")
            raise QueryError(f"{name}: line {lineno}: expected {width} numbers "
                             f"'{columns(width)}', got {shown!r} ({why})")
        rows.append([float(f) for f in fields])
    return np.array(rows, dtype=np.float64).reshape(-1, width)


def _is_header(line: str, width: int) -> bool:
    """A line naming the ``width`` columns: words, none of them a number (a
    stray word such as ``abc`` is an error, not a header)."""
    fields = line.replace(",", " ").split()
    return len(fields) == width and all(_HEADER_WORD.fullmatch(f) and f.lower() not in _FLOAT_WORDS
                                for f in fields)
