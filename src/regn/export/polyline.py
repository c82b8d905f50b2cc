"""A path's polyline as a file other tools open: VTK XML PolyData (.vtp, for
ParaView), .csv, Wavefront .obj (a polyline of ``l`` elements, for Blender),
.ply (vertices and edges) or .json.

Every format but OBJ carries two values per point: ``length``, the distance
flown from the start along the polyline, and ``clearance``, the distance from
the point to the nearest wall (:meth:`regn.Mesh.distance_to_wall`). OBJ has
no per-vertex values; its header comment gives the totals. Coordinates and
both values are in metres, or kilometres with ``units='km'``; each file says
which (a comment, the CSV column names, a JSON key, the VTP field data
``metres_per_unit``).
"""

from __future__ import annotations

import json
import os
from xml.sax.saxutils import escape

import numpy as np

from ..errors import ExportError
from ._files import PATH_EXTS, UNITS, extension, unit_scale, write_bytes


def path_table(mesh, path, units="m") -> dict:
    """The polyline of ``path`` (a :class:`regn.query.paths.path.Path`, or anything
    with ``points``) with its per-point values, scaled to ``units``:
    ``points`` (N,3), ``length`` (N,), ``clearance`` (N,), plus the totals."""
    scale = unit_scale(units)
    if getattr(path, "found", True) is False:
        raise ExportError(f"no path ({getattr(path, 'status', 'not found')}): "
                          "no polyline to write")
    pts = np.asarray(path.points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        raise ExportError("the path has no points: no polyline to write")
    step = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    along = np.concatenate([[0.0], np.cumsum(step)])
    clearance = np.asarray(mesh.distance_to_wall(pts), dtype=np.float64)
    cost = getattr(path, "cost", None)
    return {"units": units, "points": pts / scale, "length": along / scale,
            "clearance": clearance / scale, "total_length": float(along[-1]) / scale,
            "cost": None if cost is None else float(cost),
            "status": str(getattr(path, "status", "ok")),
            "source": os.path.basename(str(mesh.path)) if mesh.path else "(built in memory)"}


def _summary(t) -> str:
    u = t["units"]
    return (f"regn path from {t['source']}: {len(t['points'])} points, length "
            f"{t['total_length']:.6g} {u}, clearance {t['clearance'].min():.6g} "
            f"to {t['clearance'].max():.6g} {u}; coordinates in {u}")


def _numbers(a) -> str:
    return " ".join(repr(float(x)) for x in np.asarray(a, dtype=np.float64).ravel())


def vtp_bytes(t) -> bytes:
    """VTK XML PolyData: one polyline cell, point data ``length`` and
    ``clearance``, field data ``metres_per_unit`` and ``cost``."""
    n = len(t["points"])
    cost = [] if t["cost"] is None else [
        f'      <DataArray type="Float64" Name="cost" NumberOfTuples="1" format="ascii">'
        f'{t["cost"]!r}</DataArray>']
    lines = [
        '<?xml version="1.0"?>',
        f"<!-- {escape(_summary(t))} -->",
        '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" '
        'header_type="UInt64">',
        "  <PolyData>",
        "    <FieldData>",
        f'      <DataArray type="Float64" Name="metres_per_unit" NumberOfTuples="1" '
        f'format="ascii">{UNITS[t["units"]]!r}</DataArray>',
        *cost,
        "    </FieldData>",
        f'    <Piece NumberOfPoints="{n}" NumberOfVerts="0" NumberOfLines="1" '
        'NumberOfStrips="0" NumberOfPolys="0">',
        '      <PointData Scalars="clearance">',
        f'        <DataArray type="Float64" Name="length" format="ascii">'
        f'{_numbers(t["length"])}</DataArray>',
        f'        <DataArray type="Float64" Name="clearance" format="ascii">'
        f'{_numbers(t["clearance"])}</DataArray>',
        "      </PointData>",
        "      <Points>",
        f'        <DataArray type="Float64" NumberOfComponents="3" format="ascii">'
        f'{_numbers(t["points"])}</DataArray>',
        "      </Points>",
        "      <Lines>",
        f'        <DataArray type="Int64" Name="connectivity" format="ascii">'
        f'{" ".join(map(str, range(n)))}</DataArray>',
        f'        <DataArray type="Int64" Name="offsets" format="ascii">{n}</DataArray>',
        "      </Lines>",
        "    </Piece>",
        "  </PolyData>",
        "</VTKFile>",
    ]
    return ("\n".join(lines) + "\n").encode()


def csv_bytes(t) -> bytes:
    """One row a point; the unit is in every column name (``x_m`` …)."""
    u = t["units"]
    rows = [",".join(f"{c}_{u}" for c in ("x", "y", "z", "length", "clearance"))]
    table = np.column_stack([t["points"], t["length"], t["clearance"]])
    rows += [",".join(repr(float(x)) for x in row) for row in table]
    return ("\n".join(rows) + "\n").encode()


def obj_bytes(t) -> bytes:
    """Vertices and one ``l`` polyline element (Blender imports it as edges)."""
    lines = [f"# {_summary(t)}",
             "# per-point length and clearance: write .vtp, .ply, .csv or .json",
             f"# units: {t['units']}", "o path"]
    lines += [f"v {x!r} {y!r} {z!r}" for x, y, z in t["points"].tolist()]
    lines.append("l " + " ".join(str(i + 1) for i in range(len(t["points"]))))
    return ("\n".join(lines) + "\n").encode()


def ply_bytes(t) -> bytes:
    """ASCII PLY: vertices with ``length`` and ``clearance``, and the edges."""
    n = len(t["points"])
    head = ["ply", "format ascii 1.0", f"comment {_summary(t)}",
            f"comment units {t['units']}", f"element vertex {n}",
            "property double x", "property double y", "property double z",
            "property double length", "property double clearance",
            f"element edge {n - 1}", "property int vertex1", "property int vertex2",
            "end_header"]
    table = np.column_stack([t["points"], t["length"], t["clearance"]])
    body = [" ".join(repr(float(x)) for x in row) for row in table]
    body += [f"{i} {i + 1}" for i in range(n - 1)]
    return ("\n".join(head + body) + "\n").encode()


def json_bytes(t) -> bytes:
    doc = {"format": "regn-path/1", "source": t["source"], "units": t["units"],
           "status": t["status"], "cost": t["cost"], "length": t["total_length"],
           "points": t["points"].tolist(), "length_along": t["length"].tolist(),
           "clearance": t["clearance"].tolist()}
    return (json.dumps(doc, allow_nan=False) + "\n").encode()


_WRITERS = {".vtp": vtp_bytes, ".csv": csv_bytes, ".obj": obj_bytes, ".ply": ply_bytes,
            ".json": json_bytes}
assert tuple(_WRITERS) == PATH_EXTS


def write_path(mesh, path, out, *, units="m") -> dict:
    """Write the polyline of ``path`` (found on ``mesh``) to ``out``, in the
    format its extension names (:data:`regn.export.PATH_EXTS`), atomically.
    Returns the :func:`path_table` written."""
    ext = extension(out)
    if ext not in _WRITERS:
        raise ExportError(f"{os.fspath(out)}: a path is written as one of "
                          f"{' '.join(PATH_EXTS)}, not {ext or '(no extension)'}")
    table = path_table(mesh, path, units)
    write_bytes(out, _WRITERS[ext](table))
    return table
