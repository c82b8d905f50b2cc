"""Helpers shared by the CLI's subcommands."""

from __future__ import annotations

import itertools
import json
import sys

import numpy as np


def load_mesh(path):
    """Load a REGN file for a command (errors propagate as RegnError)."""
    from ..io import load
    return load(path)


def _array_to_jsonable(arr: np.ndarray):
    """An array as nested lists in one pass; only arrays holding NaN/inf take
    the slow path (JSON has no non-finite numbers: NaN -> null, +-inf ->
    +-1e308)."""
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        out = arr.astype(object)
        out[np.isnan(arr)] = None
        out[np.isposinf(arr)] = 1e308
        out[np.isneginf(arr)] = -1e308
        return out.tolist()
    if arr.dtype.kind in "biuf":
        return arr.tolist()
    return to_jsonable(arr.tolist())


def to_jsonable(obj):
    """numpy scalars/arrays -> plain Python for json.dumps."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _array_to_jsonable(obj)
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item() if not isinstance(obj, np.floating) else to_jsonable(obj.item())
    if isinstance(obj, float) and not np.isfinite(obj):
        return None if np.isnan(obj) else (1e308 if obj > 0 else -1e308)
    if isinstance(obj, bytes):
        return obj.decode("latin-1")
    return obj


def print_json(obj, stream=None):
    # json.dumps, not json.dump: only the one-shot path uses the C encoder
    stream = stream or sys.stdout
    stream.write(json.dumps(to_jsonable(obj), allow_nan=False))
    stream.write("\n")


def _what(width):
    return "x y z" if width == 3 else "x0 y0 z0 x1 y1 z1"


def _parse_rows(lines, width, first_lineno=1):
    """The rows of text lines (numbers separated by spaces or commas; blank
    lines and '#' comments skipped, a non-numeric first line of the input
    skipped as a header) as an (N, width) float64 array."""
    from ..errors import QueryError
    rows = []
    for lineno, line in enumerate(lines, first_lineno):
        line = line.strip().replace(",", " ")
        if not line or line.startswith("#"):
            continue
        try:
            row = [float(p) for p in line.split()]
        except ValueError:
            if lineno == 1:
                continue  # a header line
            raise QueryError(f"line {lineno}: expected '{_what(width)}', got {line!r}") from None
        if len(row) != width:
            raise QueryError(f"line {lineno}: every row needs exactly {width} numbers "
                             f"({_what(width)}), got {len(row)}")
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(-1, width)


def read_points(source=None, *, stream=None, width=3):
    """Rows of ``width`` numbers (3: points ``x y z``; 6: segments
    ``x0 y0 z0 x1 y1 z1``) from a .csv/.npy/.txt file or from lines on stdin,
    as an (N, width) float64 array."""
    from ..errors import QueryError
    if source is not None and str(source).endswith(".npy"):
        pts = np.asarray(np.load(source), dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != width:
            raise QueryError(f"rows must be (N,{width}), got shape {pts.shape}")
        return pts
    if source is not None:
        with open(source) as fh:
            return _parse_rows(fh, width)
    return _parse_rows(stream or sys.stdin, width)


def iter_rows(stream, *, width=3, chunk=4096):
    """:func:`read_points`' rows from a text stream, ``chunk`` lines at a
    time (so a long input is answered as it arrives, in bounded memory)."""
    lineno = 1
    while True:
        lines = list(itertools.islice(stream, chunk))
        if not lines:
            return
        rows = _parse_rows(lines, width, lineno)
        lineno += len(lines)
        if len(rows):
            yield rows


def check_output(out, inputs, force=False):
    """ExportError unless ``out`` may be written: never one of ``inputs`` (not
    even with ``force``), and an existing file only with ``force``."""
    import os
    from ..errors import ExportError
    if not os.path.exists(out):
        return
    for source in inputs:
        if source is not None and os.path.exists(source) and os.path.samefile(source, out):
            raise ExportError(f"{out}: is the input file; write somewhere else")
    if not force:
        raise ExportError(f"{out}: exists; pass --force to overwrite it")
