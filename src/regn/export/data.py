"""Every array of a mesh to ``.npz``, or the header plus every array to ``.json``."""

from __future__ import annotations

import io
import json
import os

import numpy as np

from ..errors import ExportError
from ._files import extension, write_bytes


def arrays(mesh) -> dict:
    """name -> numpy array: the records' arrays, the derived ones and the grid."""
    from .meshio_io import cells_listing, components
    indptr, indices = mesh.grid_csr
    t, k = mesh.face_owner
    out = {
        "vertices": mesh.vertices, "tets": mesh.tets, "tet_faces": mesh.tet_faces,
        "tet_centres": mesh.tet_centres, "tet_radii": mesh.tet_radii,
        "tet_volumes": mesh.tet_volumes, "portal_costs": mesh.portal_costs,
        "neighbors": mesh.neighbors, "neighbor_slots": mesh.neighbor_slots,
        "opposite_slot": mesh.opposite_slot,
        "face_normals": mesh.face_normals, "face_d": mesh.face_d,
        "face_points": mesh.face_points, "face_tets": mesh.face_tets,
        "face_slots": mesh.face_slots, "face_vertices": mesh.face_vertices,
        "face_owner_tet": t, "face_owner_slot": k,
        "face_centroids": mesh.face_centroids, "boundary_faces": mesh.boundary_faces,
        "bbox_min": mesh.bbox_min, "bbox_max": mesh.bbox_max, "extent": mesh.extent,
        "cell_size": mesh.cell_size, "dims": np.asarray(mesh.dims, dtype=np.int64),
        "cell_item": mesh.cell_item, "item_ref_start": mesh.item_ref_start,
        "ref_tet": mesh.ref_tet, "cell_ref_count": mesh.cell_ref_count,
        "grid_indptr": indptr, "grid_indices": indices,
        "component": components(mesh), "cells_listing": cells_listing(mesh),
    }
    return {name: np.ascontiguousarray(a) for name, a in out.items()}


def header_dict(mesh) -> dict:
    hdr = {name: np.asarray(mesh.header[name]).tolist() for name in mesh.header.dtype.names}
    return {"path": None if mesh.path is None else str(mesh.path),
            "byte_order": "big" if mesh.byte_order == ">" else "little",
            "counts": dict(zip(("vertices", "tets", "faces", "cells", "items", "refs"),
                               mesh.counts)),
            "fields": hdr}


def npz_bytes(mesh) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays(mesh))
    return buf.getvalue()


def json_bytes(mesh) -> bytes:
    doc = {"format": "regn-export/1", "header": header_dict(mesh),
           "arrays": {name: a.tolist() for name, a in arrays(mesh).items()}}
    return json.dumps(to_jsonable(doc), allow_nan=False, separators=(",", ":")).encode()


def write_data(mesh, path) -> None:
    """Write ``.npz`` (every array) or ``.json`` (header + arrays), atomically."""
    ext = extension(path)
    if ext == ".npz":
        payload = npz_bytes(mesh)
    elif ext == ".json":
        payload = json_bytes(mesh)
    else:
        raise ExportError(f"{os.fspath(path)}: unknown data extension {ext or '(none)'}; "
                          "use .npz or .json")
    write_bytes(path, payload)


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
