"""The mesh through meshio: tetrahedra with per-tet cell data, and the grid
as hexahedra.

Cell data of the volume export (one value per tetrahedron, in tet order):

* ``volume`` — m^3;
* ``component`` — connected component through shared faces (0-based);
* ``cells_listing`` — how many grid cells list the tetrahedron.

The grid export has one hexahedron per cell (linear cell order
``(iz*ny + iy)*nx + ix``) with ``ref_count`` (tetrahedra the cell lists) and
``occupied`` (1/0).
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ExportError
from ._files import VOLUME_EXTS, extension, temp_path

#: extension -> (meshio file_format, extra keyword arguments)
_FORMATS = {
    ".vtu": ("vtu", {}),
    ".vtk": ("vtk", {}),
    ".msh": ("gmsh", {}),
    ".xdmf": ("xdmf", {}),   # written here as XML (one file, no h5py needed)
    ".mesh": ("medit", {}),
}


def components(mesh) -> np.ndarray:
    """(T,) int64 connected-component label per tetrahedron (via shared faces)."""
    return mesh.components()


def cells_listing(mesh) -> np.ndarray:
    """(T,) int64 number of grid cells whose list holds each tetrahedron."""
    _, indices = mesh.grid_csr
    idx = np.asarray(indices, dtype=np.int64)
    idx = idx[(idx >= 0) & (idx < mesh.n_tets)]
    return np.bincount(idx, minlength=mesh.n_tets).astype(np.int64)


def to_meshio(mesh):
    """The tetrahedra as a ``meshio.Mesh`` with cell data volume/component/cells_listing."""
    import meshio
    return meshio.Mesh(
        points=np.asarray(mesh.vertices, dtype=np.float64),
        cells=[("tetra", np.asarray(mesh.tets, dtype=np.int64))],
        cell_data={"volume": [np.asarray(mesh.tet_volumes, dtype=np.float64)],
                   "component": [components(mesh)],
                   "cells_listing": [cells_listing(mesh)]},
    )


def grid_to_meshio(mesh):
    """The grid as a ``meshio.Mesh`` of hexahedra with ref_count / occupied."""
    import meshio
    nx, ny, nz = mesh.dims
    xs = mesh.bbox_min[0] + mesh.cell_size[0] * np.arange(nx + 1)
    ys = mesh.bbox_min[1] + mesh.cell_size[1] * np.arange(ny + 1)
    zs = mesh.bbox_min[2] + mesh.cell_size[2] * np.arange(nz + 1)
    Z, Y, X = np.meshgrid(zs, ys, xs, indexing="ij")
    points = np.stack([X.ravel(), Y.ravel(), Z.ravel()], axis=1)

    def p(ix, iy, iz):
        return (iz * (ny + 1) + iy) * (nx + 1) + ix

    iz, iy, ix = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    ix, iy, iz = ix.ravel(), iy.ravel(), iz.ravel()      # linear cell order
    hexa = np.stack([p(ix, iy, iz), p(ix + 1, iy, iz), p(ix + 1, iy + 1, iz),
                     p(ix, iy + 1, iz), p(ix, iy, iz + 1), p(ix + 1, iy, iz + 1),
                     p(ix + 1, iy + 1, iz + 1), p(ix, iy + 1, iz + 1)], axis=1)
    refs = np.asarray(mesh.cell_ref_count, dtype=np.int64)
    return meshio.Mesh(points=points, cells=[("hexahedron", hexa.astype(np.int64))],
                       cell_data={"ref_count": [refs],
                                  "occupied": [(refs > 0).astype(np.int64)]})


def _write(m, path):
    ext = extension(path)
    if ext not in _FORMATS:
        raise ExportError(f"{os.fspath(path)}: unknown volume extension {ext or '(none)'}; "
                          f"use one of {' '.join(VOLUME_EXTS)}")
    import meshio
    fmt, kwargs = _FORMATS[ext]
    if fmt == "medit":
        # medit keeps one integer per cell ("medit:ref"): store the component
        m = meshio.Mesh(m.points, m.cells,
                        cell_data={"medit:ref": [np.asarray(m.cell_data.get(
                            "component", m.cell_data.get("occupied"))[0], dtype=np.int64)]})
    with temp_path(path) as tmp:
        if fmt == "xdmf":
            with open(tmp, "wb") as fh:
                fh.write(xdmf_bytes(m))
            return
        try:
            meshio.write(tmp, m, file_format=fmt, **kwargs)
        except OSError:
            raise
        except Exception as e:
            raise ExportError(f"{os.fspath(path)}: meshio could not write {fmt}: {e}") from None


# XDMF is written here, as one XML file with the data inline: meshio's writer
# needs h5py and a second .h5 file. The grid carries a <Time> element because
# pyvista's XDMF reader requires time steps; meshio's reader rejects that element
# (and needs h5py even for inline data), so read_xdmf_inline reads it back.
_XDMF_TOPOLOGY = {"tetra": "Tetrahedron", "hexahedron": "Hexahedron"}


def _xdmf_item(a) -> str:
    a = np.asarray(a)
    if a.dtype.kind == "f":
        kind, body = 'DataType="Float" Precision="8"', "\n".join(
            " ".join(f"{x:.17g}" for x in row) for row in a.reshape(len(a), -1))
    else:
        kind, body = 'DataType="Int" Precision="8"', "\n".join(
            " ".join(str(int(x)) for x in row) for row in a.reshape(len(a), -1))
    dims = " ".join(str(d) for d in a.shape)
    return f'<DataItem Dimensions="{dims}" {kind} Format="XML">\n{body}\n</DataItem>'


def xdmf_bytes(m) -> bytes:
    """An XDMF 3 file with inline XML data, one uniform grid at time 0."""
    (block,) = m.cells
    parts = ['<?xml version="1.0"?>', '<Xdmf Version="3.0">', "<Domain>",
             '<Grid Name="regn" GridType="Uniform">', '<Time Value="0"/>',
             '<Geometry GeometryType="XYZ">', _xdmf_item(np.asarray(m.points, np.float64)),
             "</Geometry>",
             f'<Topology TopologyType="{_XDMF_TOPOLOGY[block.type]}" '
             f'NumberOfElements="{len(block.data)}">',
             _xdmf_item(np.asarray(block.data, np.int64)), "</Topology>"]
    for name, (data,) in m.cell_data.items():
        parts += [f'<Attribute Name="{name}" AttributeType="Scalar" Center="Cell">',
                  _xdmf_item(np.asarray(data)), "</Attribute>"]
    parts += ["</Grid>", "</Domain>", "</Xdmf>"]
    return ("\n".join(parts) + "\n").encode()


def _xdmf_array(path, item):
    """One inline DataItem as a float64 or int64 array of its Dimensions."""
    kind = item.get("DataType", item.get("NumberType", "Float"))
    try:
        shape = tuple(int(d) for d in item.get("Dimensions", "").split())
        a = np.array((item.text or "").split(),
                     dtype=np.float64 if kind == "Float" else np.int64)
    except ValueError as e:
        raise ExportError(f"{path}: XDMF DataItem: {e}") from None
    if not shape or a.size != int(np.prod(shape)):
        raise ExportError(f"{path}: XDMF DataItem holds {a.size} numbers, "
                          f"its Dimensions say {item.get('Dimensions')!r}")
    return a.reshape(shape)


def read_xdmf_inline(path):
    """The first grid of an XDMF file whose data is inline XML, as a
    ``meshio.Mesh`` (points and cells only); None if any DataItem is stored
    elsewhere (HDF5, binary), which meshio then reads."""
    import xml.etree.ElementTree as ET
    import meshio
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ExportError(f"{path}: not XML: {e}") from None
    except OSError as e:
        raise ExportError(f"{path}: cannot read: {e.strerror or e}") from None
    if any(d.get("Format", "XML") != "XML" or "Reference" in d.attrib
           for d in root.iter("DataItem")):
        return None
    grid = next((g for g in root.iter("Grid") if g.find("Topology") is not None), None)
    if grid is None or grid.find("Geometry/DataItem") is None \
            or grid.find("Topology/DataItem") is None:
        raise ExportError(f"{path}: no XDMF grid with an inline Geometry and Topology")
    geometry = grid.find("Geometry").get("GeometryType", "XYZ")
    if geometry != "XYZ":
        raise ExportError(f"{path}: XDMF GeometryType {geometry}; only XYZ is read")
    points = _xdmf_array(path, grid.find("Geometry/DataItem")).reshape(-1, 3)
    topology = grid.find("Topology").get("TopologyType", "")
    cell_type = {v: k for k, v in _XDMF_TOPOLOGY.items()}.get(topology)
    if cell_type is None:
        raise ExportError(f"{path}: XDMF TopologyType {topology!r}; only "
                          f"{' and '.join(_XDMF_TOPOLOGY.values())} are read")
    cells = _xdmf_array(path, grid.find("Topology/DataItem"))
    return meshio.Mesh(points, [(cell_type, cells)])


def write_volume(mesh, path) -> None:
    """Write the tetrahedra (with cell data) to .vtu/.vtk/.msh/.xdmf/.mesh, atomically."""
    _write(to_meshio(mesh), path)


def write_grid(mesh, path) -> None:
    """Write the grid as hexahedra (ref_count, occupied), atomically."""
    _write(grid_to_meshio(mesh), path)
