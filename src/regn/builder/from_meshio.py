"""A REGN mesh from a tetrahedral mesh in meshio's form (object or file)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import BuildError, ExportError
from ..geometry.tets import used_vertices
from ..inputs.meshes import load_tet_mesh, read_meshio, tetra_cells
from .tetmesh import build, check_vertex_indices


def from_meshio(m, *, bbox=None, dims=None, **build_kwargs):
    """A :class:`regn.Mesh` from a ``meshio.Mesh`` (or a path meshio can read):
    its tetra cells, every point kept, go through :func:`regn.build`."""
    if isinstance(m, (str, os.PathLike)):
        m = read_meshio(m, "mesh", ExportError)
    return build(np.asarray(m.points, dtype=np.float64)[:, :3],
                 tetra_cells(m, "the meshio mesh"), bbox=bbox, dims=dims, **build_kwargs)


def from_mesh_file(path, bbox=None, dims=None):
    """A :class:`regn.Mesh` from any tetrahedral mesh file meshio reads
    (.msh .vtu .vtk .mesh ...): its tetra cells, with the points they use.
    A BuildError names the file."""
    pts, tets = load_tet_mesh(path)
    try:
        check_vertex_indices(tets, len(pts))     # before the points are picked
        return build(*used_vertices(pts, tets), bbox=bbox, dims=dims)
    except BuildError as e:
        raise BuildError(f"{os.fspath(path)}: {e}") from None
