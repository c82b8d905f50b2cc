"""Navigation queries over a :class:`regn.mesh.Mesh`.

locate (point -> tetrahedron), nearest / distance_to_wall, find_path (A* over
the face graph + string pulling), raycast / line_of_sight, random_points and
components. Per-mesh scratch structures (inverse barycentric matrices, face
graph, KD-trees, component labels) live in :func:`scratch`, a weak cache keyed
by the mesh, never on the mesh itself.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ..errors import QueryError

_SCRATCH = weakref.WeakKeyDictionary()
_NOBODY = (lambda: None, None)
#: (weak reference to the mesh last asked for, its scratch): a single query
#: in a loop finds its mesh's caches without the weak dictionary's lookup
_LAST = _NOBODY


def scratch(mesh) -> dict:
    """A per-mesh dict of cached query structures (freed with the mesh)."""
    global _LAST
    last_mesh, last = _LAST
    if last_mesh() is mesh:
        return last
    try:
        s = _SCRATCH.setdefault(mesh, {})
    except TypeError:  # unhashable / not weak-referenceable: no caching
        return {}
    _LAST = (weakref.ref(mesh, _forget), s)
    return s


def _forget(ref):
    """The last mesh asked for is gone: let its scratch go with it."""
    global _LAST
    if _LAST[0] is ref:
        _LAST = _NOBODY


def _no_complex(p, name):
    # numpy would drop the imaginary part with only a warning
    if p.dtype.kind == "c":
        raise QueryError(f"{name}: complex numbers are not coordinates")


def as_points(points, name="points") -> np.ndarray:
    """(N,3) float64 or raise QueryError."""
    try:
        p = np.asarray(points)
        _no_complex(p, name)
        p = p.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise QueryError(f"{name}: not numeric ({exc})") from None
    if p.ndim == 1 and p.shape == (3,):
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] != 3:
        raise QueryError(f"{name} must be (N,3), got shape {p.shape}")
    return p


def point_xyz(point, name="point"):
    """The three coordinates of one point as floats, read as :func:`as_point`
    reads them (quickly for :func:`plain_xyz`'s kinds of input)."""
    xyz = plain_xyz(point)
    return as_point(point, name).tolist() if xyz is None else xyz


def plain_xyz(point):
    """[x, y, z] floats for one point given as a (3,) or (1, 3) float64 or
    float32 array, or a tuple or list of three Python floats or ints, or a
    list or tuple holding one such (what a caller asking one query usually
    has), read as :func:`as_point` would; None for any other input."""
    kind = type(point)
    if kind is np.ndarray:
        if point.dtype in _FLOATS and (point.shape == (3,) or point.shape == (1, 3)):
            return point.reshape(3).tolist()
    elif kind is tuple or kind is list:
        if len(point) == 1:
            inner = point[0]
            if type(inner) is list or type(inner) is tuple or type(inner) is np.ndarray:
                return plain_xyz(inner) if len(inner) == 3 else None
            return None
        if len(point) == 3:
            x, y, z = point
            if type(x) in _PLAIN and type(y) in _PLAIN and type(z) in _PLAIN:
                try:
                    return [float(x), float(y), float(z)]
                except OverflowError:       # an int beyond float: as_point's answer
                    pass
    return None


_PLAIN = (float, int, np.float64)
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def as_point(point, name="point") -> np.ndarray:
    """(3,) float64 or raise QueryError."""
    try:
        p = np.asarray(point)
        _no_complex(p, name)
        p = p.astype(np.float64, copy=False).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise QueryError(f"{name}: not numeric ({exc})") from None
    if p.shape != (3,):
        raise QueryError(f"{name} must be 3 numbers, got shape {np.shape(point)}")
    return p


def check_finite_point(point, name="point") -> None:
    """QueryError naming the coordinate when the one point ``point`` (a
    path's start or goal, a ray's end) is not finite: a NaN there is a
    mistake upstream, not a position outside the map. (A row of a batch is
    not checked: it is answered as outside, without voiding the others.)"""
    xyz = plain_xyz(point)
    x, y, z = as_point(point, name).tolist() if xyz is None else xyz
    if x - x == 0.0 and y - y == 0.0 and z - z == 0.0:     # all three finite
        return
    axis, value = next((a, v) for a, v in zip("xyz", (x, y, z)) if not math.isfinite(v))
    raise QueryError(f"{name}: {axis} is {value!r}, not a finite coordinate")


def as_radius(radius) -> float:
    """An agent's radius in metres as a float >= 0, or QueryError."""
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise QueryError(f"radius must be a number of metres, not {radius!r}") from None
    if not (np.isfinite(r) and r >= 0.0):
        raise QueryError(f"radius must be finite and >= 0, got {radius!r}")
    return r


def status_names(codes) -> np.ndarray:
    """(N,) :mod:`regn.status` codes -> (N,) their names."""
    from ..status import NAMES
    return np.array([NAMES[c] for c in range(len(NAMES))])[np.asarray(codes)]
