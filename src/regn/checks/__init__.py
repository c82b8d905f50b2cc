"""``regn.verify``: every statement of the format spec, checked on one object.

``verify(mesh_or_bytes, strict=False)`` returns a :class:`VerifyReport` with
one :class:`Check` per statement of ``docs/format.md``, each with a stable
snake_case name and the spec's mark as its ``kind``:

* ``seed`` -- established by the research notes; always required for ``ok``;
* ``inferred`` -- our reading; required only with ``strict=True`` (a failure
  on a real file means the reading is wrong, not necessarily the file);
* ``info`` -- a measured rate or a value worth showing, never required
  (the boundary's pinches among them: a mesh's quality, not a reading of
  the format; :attr:`VerifyReport.quality` gives their counts);

and counts (``passed`` of ``total`` records, pairs or words). A failing
check's ``detail`` names the first offending records and what was seen there.

The checks are declared in one module per part of the spec, in report order:
:mod:`.chunk` (frame, POF0, sections), :mod:`.header`, :mod:`.grid` (the
grid's records), :mod:`.geometry` (vertices in the box; later the grid
rule), :mod:`.faces`, :mod:`.tets`, :mod:`.topology` (the mesh as a whole:
overlaps; pinches, as quality), :mod:`.roundtrip`. Tolerances
(:mod:`regn.tolerances`): ``UNIT_TOL`` for face normals, ``GEOM_REL`` times
the map's scale for distances (plane residuals, centre/radius, portal costs).
"""

from __future__ import annotations

import os
import time

import numpy as np

from . import chunk, faces, geometry, grid, header, roundtrip, tets, topology
from ._report import Check, Quality, VerifyReport

#: Every check's declaration (:class:`._report.Statement`), in report order.
STATEMENTS = tuple(s for part in (chunk.PART, header.PART, grid.PART, geometry.VERTICES,
                                  faces.PART, tets.PART, geometry.GRID, topology.PART,
                                  roundtrip.PART)
                   for s in part.statements)
#: Every check, in report order: (name, kind). Names are stable.
CHECKS = tuple((s.name, s.kind) for s in STATEMENTS)

__all__ = ["verify", "VerifyReport", "Check", "Quality", "CHECKS"]


def verify(mesh_or_bytes, *, strict=False, path=None, progress=None) -> VerifyReport:
    """Run every check of the spec on a :class:`~regn.Mesh`, REGN bytes or a
    file's path (a ``str`` or :class:`os.PathLike`, read with :func:`regn.load`).

    Bytes are parsed with :func:`regn.loads` (a :class:`FormatError` -- the
    object cannot be read at all -- propagates). A built mesh (no bytes behind
    it) is checked as the bytes it writes. ``strict`` makes [inferred] checks
    required for :attr:`VerifyReport.ok`. ``progress(phase, fraction)``, when
    given, is called before each check (the CLI's bar at a terminal).
    """
    from ._run import start

    t0 = time.perf_counter()
    mesh, original, path = _own_copy(mesh_or_bytes, path)
    mesh.check_records()   # index ranges; a FormatError here propagates
    report = VerifyReport(path=None if path is None else str(path), strict=strict)
    report.byte_order = "big" if mesh.byte_order == ">" else "little"
    run = start(mesh, original)
    with np.errstate(all="ignore"):       # NaN and inf in a file are data to report
        report.checks = []
        for k, s in enumerate(STATEMENTS):
            if progress is not None:
                progress(f"check {k + 1} of {len(STATEMENTS)}", k / len(STATEMENTS))
            report.checks.append(s.run(run))
    report.quality = {s.quality[0]: Quality(c.total - c.passed, c.total, s.quality[1])
                      for s, c in zip(STATEMENTS, report.checks) if s.quality}
    table = run.fact(chunk.pof0).table
    report.pof0_dialect = None if table is None else int(table.dialect)
    report.pof0_note = run.fact(chunk.pof0).note
    report.first_difference = run.fact(roundtrip.first_difference)
    report.roundtrip_identical = report.first_difference is None
    report.seconds = time.perf_counter() - t0
    return report


def _own_copy(mesh_or_bytes, path):
    """(verify's own mesh read from the object's bytes, the bytes, the path)."""
    from ..io import load, loads
    from ..mesh import Mesh

    if isinstance(mesh_or_bytes, (str, os.PathLike)):
        mesh_or_bytes = load(mesh_or_bytes)
    if isinstance(mesh_or_bytes, Mesh):
        path = path if path is not None else mesh_or_bytes.path
        original = mesh_or_bytes.object_bytes()
    elif isinstance(mesh_or_bytes, (bytes, bytearray, memoryview)):
        original = bytes(mesh_or_bytes)
    else:
        raise TypeError("verify() takes a regn.Mesh, REGN bytes or a file's path, not "
                        f"{type(mesh_or_bytes).__name__}")
    return loads(original, path=path), original, path
