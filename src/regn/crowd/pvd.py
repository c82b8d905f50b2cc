"""A trajectory as a ParaView time series: ``TRAJ.pvd``, a VTK collection
naming one ``.vtp`` file per recorded step, in the folder ``TRAJ/`` beside
it (``TRAJ/step_000000.vtp`` ...), each step file's time its step x dt.
Open ``TRAJ.pvd`` in ParaView and the Play button steps through time.

Each step file is VTK XML poly data: one point per agent (a vertex cell
each, so every representation draws it) at its position, with the point
arrays ``agent``, ``radius`` (m; for the Point Gaussian representation's
scale), ``velocity`` (m/s, 3 components), ``speed`` (m/s) and ``status``
(the codes of :data:`regn.crowd.crowd.STATUS` at that step when the
trajectory recorded them, else the final ones). Arrays are inline binary
(base64, a UInt64 byte count before the data), little-endian.

Files are written one by one through :mod:`regn._atomic`, the ``.pvd``
last, so a reader never meets a collection naming a missing step.
"""

from __future__ import annotations

import base64
import os

import numpy as np

from ..errors import ExportError


def step_folder(path) -> str:
    """The folder of ``path``'s step files: its name without ``.pvd``."""
    return os.path.splitext(os.fspath(path))[0]


def _array(name, values, kind, comps=1) -> str:
    raw = np.ascontiguousarray(values).astype(kind.newbyteorder("<"), copy=False).tobytes()
    blob = base64.b64encode(np.uint64(len(raw)).astype("<u8").tobytes() + raw).decode()
    vtk = {"f8": "Float64", "f4": "Float32", "i4": "Int32", "i8": "Int64"}[kind.str[1:]]
    return (f'<DataArray type="{vtk}" Name="{name}" NumberOfComponents="{comps}" '
            f'format="binary">{blob}</DataArray>\n')


def step_bytes(pos, vel, radius, status) -> bytes:
    """One step's ``.vtp``: N agents at (N,3) ``pos`` as vertices."""
    n = len(pos)
    f4, f8, i4 = np.dtype("f4"), np.dtype("f8"), np.dtype("i4")
    ids = np.arange(n)
    head = ('<?xml version="1.0"?>\n<VTKFile type="PolyData" version="1.0" '
            'byte_order="LittleEndian" header_type="UInt64">\n<PolyData>\n'
            f'<Piece NumberOfPoints="{n}" NumberOfVerts="{n}">\n<PointData>\n')
    parts = [head,
             _array("agent", ids, i4),
             _array("radius", radius, f4),
             _array("velocity", vel, f4, 3),
             _array("speed", np.linalg.norm(vel, axis=1), f4),
             _array("status", status, i4),
             "</PointData>\n<Points>\n", _array("points", pos, f8, 3),
             "</Points>\n<Verts>\n", _array("connectivity", ids, i4),
             _array("offsets", ids + 1, i4), "</Verts>\n</Piece>\n</PolyData>\n</VTKFile>\n"]
    return "".join(parts).encode()


def collection_bytes(files, times) -> bytes:
    """The ``.pvd`` text naming ``files`` (relative paths) at ``times``."""
    rows = "".join(f'<DataSet timestep="{t:.9g}" group="" part="0" file="{f}"/>\n'
                   for f, t in zip(files, times))
    return ('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" '
            f'byte_order="LittleEndian">\n<Collection>\n{rows}</Collection>\n'
            '</VTKFile>\n').encode()


def write_pvd(traj, path, *, overwrite=True, every=1) -> list:
    """Write :class:`regn.crowd.trajectory.Trajectory` ``traj`` as
    ``path`` (.pvd) and its step files (every ``every``-th step, and the
    last); returns the step files' paths. An existing collection or step
    folder is replaced only with ``overwrite`` (step files of an earlier,
    longer run in the folder are removed)."""
    from .._atomic import atomic_write
    path = os.fspath(path)
    folder = step_folder(path)
    if not overwrite and (os.path.exists(path) or os.path.exists(folder)):
        raise ExportError(f"{path}: exists; not overwritten")
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ExportError(f"{folder}: exists and is not a folder (the .pvd's step files)")
    steps = list(range(0, traj.steps + 1, max(int(every), 1)))
    if steps[-1] != traj.steps:
        steps.append(traj.steps)
    status = getattr(traj, "statuses", None)
    try:
        os.makedirs(folder, exist_ok=True)
        names = []
        for k in steps:
            name = f"step_{k:06d}.vtp"
            st = traj.status if status is None else status[k]
            atomic_write(os.path.join(folder, name),
                         step_bytes(traj.positions[k], traj.velocities[k], traj.radius, st))
            names.append(name)
        keep = set(names)
        for old in os.listdir(folder):
            if old.startswith("step_") and old.endswith(".vtp") and old not in keep:
                os.unlink(os.path.join(folder, old))
        rel = os.path.basename(folder)
        atomic_write(path, collection_bytes([f"{rel}/{n}" for n in names],
                                            np.asarray(steps) * traj.dt))
    except OSError as e:
        raise ExportError(f"{path}: cannot write: {e.strerror or e}") from None
    return [os.path.join(folder, n) for n in names]
