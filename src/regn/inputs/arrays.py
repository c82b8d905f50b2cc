""".npy arrays: the header checked against the file before anything is
allocated, the dtype checked against what the caller can use.

numpy's own ``np.load`` trusts the header: a 128-byte file claiming 10^13
elements makes it try to allocate 73 TiB, a structured or timedelta dtype
reaches the caller as a TypeError or IndexError, and an ``.npz`` comes back
as an archive object. Here each of those is one :class:`~regn.errors.RegnError`
naming the file.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from .. import _atomic
from ..errors import QueryError

#: dtype kinds of plain numbers (bool, signed, unsigned, float).
NUMBER_KINDS = "biuf"
_KIND_NAMES = {"b": "bool", "i": "integer", "u": "integer", "f": "float",
               "c": "complex", "m": "timedelta", "M": "datetime", "O": "object",
               "S": "bytes", "U": "string", "V": "structured"}


@dataclass(frozen=True)
class NpyFile:
    """A checked .npy header: the data is ``shape`` x ``dtype`` from byte
    ``data_offset``, and the file holds exactly that many bytes."""

    path: str
    shape: tuple
    dtype: np.dtype
    fortran_order: bool
    data_offset: int

    @property
    def count(self) -> int:
        return math.prod(self.shape)


def open_npy(path, *, kinds=NUMBER_KINDS, what="array", error=QueryError) -> NpyFile:
    """Read and check the header of the .npy file ``path``; ``error``
    (naming the file) when it is not an .npy of a dtype of ``kinds`` whose
    data fills the file exactly."""
    path = os.fspath(path)
    fmt = np.lib.format
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            magic = fh.read(len(fmt.MAGIC_PREFIX))
            if magic[:2] == b"PK":
                raise error(f"{path}: a zip archive (.npz?), not an .npy {what}; "
                            "save it with numpy.save")
            if magic != fmt.MAGIC_PREFIX:
                raise error(f"{path}: not an .npy file (no NUMPY magic)")
            fh.seek(0)
            try:
                version = fmt.read_magic(fh)
                reader = (fmt.read_array_header_1_0 if version == (1, 0)
                          else fmt.read_array_header_2_0)
                shape, fortran, dtype = reader(fh)
            except (ValueError, SyntaxError, TypeError) as e:
                raise error(f"{path}: bad .npy header: {_first_line(e)}") from None
            offset = fh.tell()
        _atomic.note_input(path)
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    if dtype.kind not in kinds or dtype.hasobject or dtype.subdtype is not None:
        want = " or ".join(dict.fromkeys(_KIND_NAMES[k] for k in kinds))
        raise error(f"{path}: the {what} must hold {want} numbers, not "
                    f"{_KIND_NAMES.get(dtype.kind, dtype.kind)} ({dtype})")
    if any(n < 0 for n in shape):
        raise error(f"{path}: negative shape {shape} in the .npy header")
    need = math.prod(shape) * dtype.itemsize
    if need != size - offset:
        raise error(f"{path}: the header's shape {shape} of {dtype} needs {need} bytes of "
                    f"data, the file has {size - offset}")
    return NpyFile(path, tuple(int(n) for n in shape), dtype, bool(fortran), offset)


def load_npy(path, *, kinds=NUMBER_KINDS, what="array", error=QueryError) -> np.ndarray:
    """The whole array of a checked .npy file (see :func:`open_npy`), in
    native byte order."""
    npy = open_npy(path, kinds=kinds, what=what, error=error)
    with open(npy.path, "rb") as fh:
        fh.seek(npy.data_offset)
        flat = np.fromfile(fh, dtype=npy.dtype, count=npy.count)
    order = "F" if npy.fortran_order else "C"
    return flat.reshape(npy.shape, order=order).astype(npy.dtype.newbyteorder("="),
                                                        copy=False)


def iter_npy_rows(npy: NpyFile, width: int, chunk_rows: int, *, error=QueryError):
    """float64 (n, width) blocks of at most ``chunk_rows`` rows of a checked
    (N, width) .npy file, read one block at a time."""
    if len(npy.shape) != 2 or npy.shape[1] != width:
        raise error(f"{npy.path}: rows must be (N,{width}), got shape {npy.shape}")
    n = npy.shape[0]
    item = npy.dtype.itemsize
    with open(npy.path, "rb") as fh:
        for lo in range(0, n, chunk_rows):
            m = min(chunk_rows, n - lo)
            if npy.fortran_order:       # column after column: read each column's slice
                cols = []
                for c in range(width):
                    fh.seek(npy.data_offset + (c * n + lo) * item)
                    cols.append(np.fromfile(fh, dtype=npy.dtype, count=m))
                block = np.stack(cols, axis=1)
            else:
                fh.seek(npy.data_offset + lo * width * item)
                block = np.fromfile(fh, dtype=npy.dtype, count=m * width).reshape(m, width)
            yield block.astype(np.float64)


def _first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
