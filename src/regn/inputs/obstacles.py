"""Obstacle files: sphere lists (CSV, JSON) and closed triangle surfaces."""

from __future__ import annotations

import csv
import io
import json
import math
import os

import numpy as np

from .. import _atomic
from ..geometry.obstacles import Sphere, TriangleMesh
from ..errors import BuildError
from .meshes import read_meshio

#: The largest magnitude a map can store (its coordinates are float32).
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _num(text, where, name):
    try:
        x = float(text)
    except ValueError:
        raise BuildError(f"{where}: {name} is not a number: {text!r}") from None
    return _in_range(x, where, name)


def _in_range(x, where, name):
    """``x`` when finite and storable as float32, else BuildError."""
    if not math.isfinite(x) or abs(x) > FLOAT32_MAX:
        raise BuildError(f"{where}: {name} must be a finite number within "
                         f"+-{FLOAT32_MAX:.4g} (float32), got {x!r}")
    return x


def _sphere_from(x, y, z, r, where):
    if not r > 0:
        raise BuildError(f"{where}: radius must be > 0, got {r:g}")
    return Sphere((x, y, z), r)


def _json_int(text):
    """JSON integers as floats, so 10**400 is inf (refused as out of
    range) rather than an int float() cannot convert."""
    return float(text)


def load_spheres(path):
    """Sphere obstacles from a CSV or JSON file.

    CSV: one sphere a line, columns ``x,y,z,radius`` (commas, or blanks), one
    optional header line naming the columns (any order; ``r`` for radius);
    blank lines and ``#`` comments are skipped. JSON: a list of objects with
    keys ``x``, ``y``, ``z``, ``radius`` (or ``r``). Raises :class:`BuildError`
    naming the file and line on bad input.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
        _atomic.note_input(path)
    except OSError as e:
        raise BuildError(f"{path}: cannot read sphere file: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise BuildError(f"{path}: not a text file") from None
    stripped = text.lstrip()
    if path.lower().endswith(".json") or stripped[:1] in ("[", "{"):
        return _spheres_json(path, text)
    return _spheres_csv(path, text)


def _spheres_json(path, text):
    try:
        data = json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as e:
        raise BuildError(f"{path}: line {e.lineno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise BuildError(f"{path}: JSON nested too deeply (a sphere file is a list "
                         "of objects)") from None
    if isinstance(data, dict) and isinstance(data.get("spheres"), list):
        data = data["spheres"]
    if not isinstance(data, list):
        raise BuildError(f"{path}: JSON must be a list of objects with x, y, z, radius")
    out = []
    for i, item in enumerate(data):
        where = f"{path}: sphere {i}"
        if not isinstance(item, dict):
            raise BuildError(f"{where}: expected an object with x, y, z, radius")
        rkey = "radius" if "radius" in item else "r"
        missing = [k for k in ("x", "y", "z", rkey) if k not in item]
        if missing:
            raise BuildError(f"{where}: missing key(s) {', '.join(missing)}")
        vals = []
        for k in ("x", "y", "z", rkey):
            v = item[k]
            if not isinstance(v, float):     # ints arrive as floats, bools do not
                raise BuildError(f"{where}: {k} must be a number, got {v!r}")
            vals.append(_in_range(v, where, k))
        out.append(_sphere_from(*vals, where))
    return out


_MAX_LINE = 4096


def _spheres_csv(path, text):
    out = []
    cols = None
    seen_data = False
    for lineno, raw in enumerate(io.StringIO(text), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if len(line) > _MAX_LINE:
            raise BuildError(f"{path}: line {lineno} is longer than {_MAX_LINE} "
                             "characters, not a sphere")
        if "," in line:
            fields = [f.strip() for f in next(csv.reader([line]))]
        else:
            fields = line.replace(";", " ").split()
        where = f"{path}: line {lineno}"
        if cols is None and not seen_data:
            try:
                [float(f) for f in fields]
            except ValueError:
                names = [f.lower() for f in fields]
                names = ["radius" if f == "r" else f for f in names]
                missing = [k for k in ("x", "y", "z", "radius") if k not in names]
                if missing:
                    raise BuildError(f"{where}: header must name columns x, y, z, radius; "
                                     f"missing {', '.join(missing)}") from None
                cols = [names.index(k) for k in ("x", "y", "z", "radius")]
                continue
        seen_data = True
        idx = cols or [0, 1, 2, 3]
        if len(fields) < max(idx) + 1 or (cols is None and len(fields) != 4):
            raise BuildError(f"{where}: expected 4 columns x, y, z, radius, got {len(fields)}")
        x, y, z, r = (_num(fields[k], where, name)
                      for k, name in zip(idx, ("x", "y", "z", "radius")))
        out.append(_sphere_from(x, y, z, r, where))
    return out


_SURFACE_CELLS = {"triangle"}
_IGNORED_CELLS = {"vertex", "line", "line3"}


def load_obstacle_mesh(path, inflation=0.0):
    """A :class:`TriangleMesh` obstacle from any surface file meshio reads
    (.obj, .ply, .stl, .off, ...). Only triangle faces are accepted (points and
    lines are ignored); the surface must be closed. Raises :class:`BuildError`."""
    path = os.fspath(path)
    m = read_meshio(path, "obstacle mesh", BuildError)
    pts = np.asarray(m.points, np.float64)
    if pts.ndim != 2 or pts.shape[1] not in (2, 3):
        raise BuildError(f"{path}: unexpected point array of shape {pts.shape}")
    if pts.shape[1] == 2:
        raise BuildError(f"{path}: a 2D mesh; an obstacle needs 3D points")
    bad = ~(np.abs(pts) <= FLOAT32_MAX).all(axis=1)       # NaN fails the test too
    if bad.any():
        i = int(np.argmax(bad))
        raise BuildError(f"{path}: point {i} {pts[i].tolist()} is not a finite number "
                         f"within +-{FLOAT32_MAX:.4g} (float32)")
    tris = []
    other = set()
    for block in m.cells:
        if block.type in _SURFACE_CELLS:
            tris.append(np.asarray(block.data, np.int64).reshape(-1, 3))
        elif block.type not in _IGNORED_CELLS:
            other.add(block.type)
    if other:
        raise BuildError(f"{path}: only triangle faces are supported, found "
                         f"{', '.join(sorted(other))} cells (triangulate the mesh first)")
    if not tris:
        raise BuildError(f"{path}: no triangles in the file")
    return TriangleMesh(pts, np.concatenate(tris), inflation,
                        name=os.path.basename(path))
