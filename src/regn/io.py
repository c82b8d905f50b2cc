"""Reading and writing whole files: ``load``, ``loads``, ``save``."""

from __future__ import annotations

import os

from ._atomic import atomic_write
from .errors import FormatError, RegnError
from .format.reader import parse
from .mesh import Mesh


def loads(data, *, path=None) -> Mesh:
    """A :class:`Mesh` from the bytes of one REGN object (either byte order).

    Only the header is parsed and every count and pointer validated against
    the size; the sections stay views of ``data`` until used.
    """
    return Mesh.from_parts(parse(data, path=path))


def load(path, *, max_tiles=None, max_bytes=None) -> Mesh:
    """Read a ``.rgn`` file (a device or pipe too: read as far as its chunk
    headers say, see :mod:`regn.inputs.maps`). Raises :class:`FormatError`
    naming the file, the offset and what is wrong.

    A ``.json`` path is a world's manifest: the result is then a
    :class:`regn.world.World`, reading its tiles on demand, at most
    ``max_tiles`` at once (default 8) and, with ``max_bytes``, no more
    than their footprints in bytes allow (:meth:`regn.world.World.footprint`)."""
    from .inputs.maps import read_map_bytes
    path = os.fspath(path)
    if path.lower().endswith(".json"):
        from .world.world import DEFAULT_MAX_TILES, load_world
        return load_world(path, max_tiles=max_tiles or DEFAULT_MAX_TILES, max_bytes=max_bytes)
    return loads(read_map_bytes(path), path=path)


def save(mesh: Mesh, path, *, overwrite: bool = True, byte_order=None,
         pof0_dialect=None) -> None:
    """Write ``mesh`` to ``path`` atomically (temporary file, then rename).

    An existing file is replaced, as ``open(path, "wb")`` would; with
    ``overwrite=False`` that is a :class:`RegnError` instead (the CLI's rule
    without ``--force``). A symlink is written through, a device or pipe
    written to, never replaced. Big-endian with the 3-byte POF0 dialect
    unless ``byte_order`` / ``pof0_dialect`` say otherwise."""
    payload = mesh.dumps(byte_order=byte_order, pof0_dialect=pof0_dialect)
    try:
        atomic_write(path, payload, overwrite=overwrite)
    except FileExistsError as e:      # exists without overwrite, or an input
        raise RegnError(str(e)) from None
    except OSError as e:
        raise RegnError(f"{os.fspath(path)}: cannot write: {e.strerror or e}") from None


__all__ = ["load", "loads", "save", "FormatError"]
