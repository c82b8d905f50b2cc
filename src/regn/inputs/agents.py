"""Agent lists for ``regn fly``: a CSV file with a header naming the
columns ``x,y,z,gx,gy,gz,radius,max_speed,max_accel`` (metres, seconds; in
any order, and an optional ``priority`` column), one agent a line. Blank
lines and lines starting with ``#`` are skipped. ``max_accel`` may be
``inf`` (no limit); radius, max_speed, max_accel and priority must be > 0
and every coordinate finite. Any other line is an error naming the file
and the line."""

from __future__ import annotations

import numpy as np

from ..errors import QueryError

#: the columns an agent list must have, in the order ``load_agents`` returns them
REQUIRED = ("x", "y", "z", "gx", "gy", "gz", "radius", "max_speed", "max_accel")
OPTIONAL = ("priority",)


def load_agents(path) -> dict:
    """``{"position": (N,3), "goal": (N,3), "radius", "max_speed",
    "max_accel", "priority", "line": (N,)}`` (``line``: each agent's line
    in the file, from 1) from the CSV file ``path`` (see the
    module docstring); QueryError naming the file and line otherwise."""
    from .._atomic import note_input
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise QueryError(f"{path}: cannot read: {e.strerror or e}") from None
    note_input(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise QueryError(f"{path}: not UTF-8 text") from None
    header, cols, rows, lines = None, None, [], []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        cells = [c.strip() for c in s.split(",")]
        if header is None:
            header = [c.lower() for c in cells]
            missing = [c for c in REQUIRED if c not in header]
            unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
            if missing or unknown or len(set(header)) != len(header):
                raise QueryError(
                    f"{path}: line {n}: the header must name the columns "
                    f"{','.join(REQUIRED)} (optional: priority); "
                    + (f"missing {','.join(missing)}" if missing else
                       f"unknown {','.join(unknown)}" if unknown else "a column twice"))
            cols = [header.index(c) for c in REQUIRED + OPTIONAL if c in header]
            continue
        rows.append(_row(path, n, cells, len(header), cols))
        lines.append(n)
    if header is None:
        raise QueryError(f"{path}: no header line (expected {','.join(REQUIRED)})")
    a = np.array(rows, dtype=np.float64).reshape(-1, len(cols))
    return {"position": a[:, 0:3], "goal": a[:, 3:6], "radius": a[:, 6],
            "max_speed": a[:, 7], "max_accel": a[:, 8],
            "priority": a[:, 9] if a.shape[1] > 9 else np.ones(len(a)),
            "line": np.array(lines, np.int64)}


def _row(path, n, cells, width, cols):
    """One line's values in REQUIRED (+ OPTIONAL) order, or QueryError."""
    if len(cells) != width:
        raise QueryError(f"{path}: line {n}: {len(cells)} values, the header has {width}")
    try:
        v = [float(cells[c]) for c in cols]
    except ValueError:
        bad = next(cells[c] for c in cols if not _is_number(cells[c]))
        raise QueryError(f"{path}: line {n}: {bad!r} is not a number") from None
    names = REQUIRED + OPTIONAL
    for name, x in zip(names, v):
        if name == "max_accel":
            ok = x > 0
        elif name in ("radius", "max_speed", "priority"):
            ok = x > 0 and np.isfinite(x)
        else:
            ok = np.isfinite(x)
        if not ok:
            need = "finite" if name in REQUIRED[:6] else "> 0"
            raise QueryError(f"{path}: line {n}: {name} must be {need}, got {cells[cols[names.index(name)]]}")
    return v


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False
