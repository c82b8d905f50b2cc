"""Mesh files read through meshio."""

from __future__ import annotations

import os

import numpy as np

from .. import _atomic
from ..errors import BuildError, RegnError


def read_meshio(path, what="mesh", error=RegnError):
    """A ``meshio.Mesh`` from any file meshio reads; ``error`` (naming the
    file and ``what`` it was to be) when it is missing or unreadable."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise error(f"{path}: no such {what} file")
    _atomic.note_input(path)
    if path.lower().endswith(".xdmf"):
        # the XML-inline form regn writes is read here: meshio's XDMF reader
        # needs h5py even for inline data
        from ..export.meshio_io import read_xdmf_inline
        m = read_xdmf_inline(path)
        if m is not None:
            return m
    import meshio
    try:
        return meshio.read(path)
    except Exception as e:  # meshio raises many kinds of errors on bad input
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise error(f"{path}: cannot read {what}: {msg}") from None


def tetra_cells(m, where) -> np.ndarray:
    """(T,4) int64: every tetra cell of meshio mesh ``m``, block after block;
    BuildError (naming ``where``) when it has none."""
    tets = [np.asarray(block.data) for block in m.cells if block.type == "tetra"]
    if not tets:
        kinds = sorted({block.type for block in m.cells}) or ["none"]
        raise BuildError(f"{where}: no tetra cells (cells: {', '.join(kinds)})")
    return np.concatenate(tets).astype(np.int64)


def load_tet_mesh(path):
    """``(points (V,3) float64, tets (T,4) int64)`` of a tetrahedral mesh
    file meshio reads (.msh .vtu .vtk .mesh ...): its tetra cells, other
    cells ignored. Raises RegnError / BuildError naming the file."""
    path = os.fspath(path)
    m = read_meshio(path, "tetrahedral mesh")
    tets = tetra_cells(m, path)
    pts = np.asarray(m.points, np.float64)
    if pts.shape[1] == 2:
        raise BuildError(f"{path}: 2-D points; a tetrahedral mesh needs 3-D")
    return pts[:, :3], tets
