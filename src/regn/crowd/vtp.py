"""A trajectory as VTK XML poly data (``.vtp``, ASCII) for ParaView: one
polyline per agent through its positions at every step, with point arrays
``time`` (s), ``step``, ``agent``, ``speed`` (m/s) and ``velocity`` (m/s,
3 components), and cell arrays ``agent``, ``radius``, ``status`` and
``arrived_step`` per polyline. To play it back in ParaView, threshold on
``time`` (or colour by it); points are ordered step-major within each
agent's line."""

from __future__ import annotations

import io

import numpy as np


def _array(buf, name, values, fmt, comps=1, kind="Float64"):
    buf.write(f'<DataArray type="{kind}" Name="{name}" NumberOfComponents="{comps}" '
              f'format="ascii">\n')
    np.savetxt(buf, np.asarray(values).reshape(-1, comps), fmt=fmt)
    buf.write("</DataArray>\n")


def vtp_bytes(traj) -> bytes:
    """The ``.vtp`` text of a :class:`regn.crowd.trajectory.Trajectory`."""
    T1, N, _ = traj.positions.shape
    pts = traj.positions.transpose(1, 0, 2).reshape(-1, 3)          # agent-major
    vel = traj.velocities.transpose(1, 0, 2).reshape(-1, 3)
    step = np.tile(np.arange(T1), N)
    buf = io.StringIO()
    buf.write('<?xml version="1.0"?>\n<VTKFile type="PolyData" version="0.1" '
              'byte_order="LittleEndian">\n<PolyData>\n'
              f'<Piece NumberOfPoints="{N * T1}" NumberOfLines="{N}">\n<PointData>\n')
    _array(buf, "time", step * traj.dt, "%.9g")
    _array(buf, "step", step, "%d", kind="Int64")
    _array(buf, "agent", np.repeat(np.arange(N), T1), "%d", kind="Int64")
    _array(buf, "speed", np.linalg.norm(vel, axis=1), "%.9g")
    _array(buf, "velocity", vel, "%.9g", 3)
    buf.write("</PointData>\n<CellData>\n")
    _array(buf, "agent", np.arange(N), "%d", kind="Int64")
    _array(buf, "radius", traj.radius, "%.9g")
    _array(buf, "status", traj.status, "%d", kind="Int64")
    _array(buf, "arrived_step", traj.arrived_step, "%d", kind="Int64")
    buf.write("</CellData>\n<Points>\n")
    _array(buf, "points", pts, "%.17g", 3)
    buf.write("</Points>\n<Lines>\n")
    _array(buf, "connectivity", np.arange(N * T1), "%d", kind="Int64")
    _array(buf, "offsets", T1 * np.arange(1, N + 1), "%d", kind="Int64")
    buf.write("</Lines>\n</Piece>\n</PolyData>\n</VTKFile>\n")
    return buf.getvalue().encode()
