"""How one verify runs: its own scratch, and the work it starts on
background threads.

The kernels release the GIL, so while the main thread runs the structural
checks, background threads run the face and tetrahedron kernels and the grid
rule's membership test (the longest piece of work, in pieces on two
threads). Each result is joined where a check first asks for it; the pieces
are joined in tetrahedron order, so no result depends on timing. (The round
trip's re-encoding runs on the main thread, last: in the background it saved
nothing measurable.)
"""

from __future__ import annotations

import threading
from functools import cached_property

import numpy as np

from ..format.layout import NO_SLOT, NO_TET, PORTAL_PAIRS, dtype_for
from ..geometry import grid_membership_split
from ..tolerances import GEOM_REL
from . import geometry, tets, topology

#: Below this many tetrahedra everything runs on the caller's thread
#: (starting threads costs more than the work they would overlap).
THREADS_MIN_TETS = 2000


class Job:
    """``fn(*args)``, computed once: on a background thread (``result()``
    joins it and re-raises its exception), or by the first ``result()``
    (others wait for it)."""

    def __init__(self, fn, *args, background=False):
        self._fn, self._args = fn, args
        self._lock = threading.Lock()
        self._done = False
        self._out = self._err = None
        self._thread = None
        if background:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def _run(self):
        try:
            self._out = self._fn(*self._args)
        except BaseException as e:      # re-raised on the caller's thread
            self._err = e
        self._done = True

    def result(self):
        if self._thread is not None:
            self._thread.join()
        else:
            with self._lock:
                if not self._done:
                    self._run()
        if self._err is not None:
            raise self._err
        return self._out


class Run:
    """One verify's scratch (the mesh's own cache is never written):
    ``mesh`` (verify's own copy), ``original`` (the bytes it was read from),
    ``records`` (what the kernels read), ``tol`` (the distance tolerance),
    and the facts the checks share, each computed once by :meth:`fact`."""

    def __init__(self, mesh, original):
        self.mesh = mesh
        self.original = original
        self.threaded = mesh.n_tets >= THREADS_MIN_TETS
        self._facts = {}
        self._lock = threading.Lock()

    @cached_property
    def tol(self) -> float:
        """Distances checked (plane residuals, centre/radius, portal costs):
        :data:`GEOM_REL` of the map's scale ``max(|bbox min|, |bbox max|,
        extent, 1)``."""
        lo, hi = self.mesh.bbox_min, self.mesh.bbox_max
        return GEOM_REL * float(max(np.abs(lo).max(), np.abs(hi).max(), (hi - lo).max(),
                                    1.0))

    @property
    def records(self):
        """:data:`regn.checks._kernels.Records` of the object."""
        return self.fact(_records)

    def fact(self, fn):
        """``fn(self)``, computed once (joined, if it was started)."""
        with self._lock:
            job = self._facts.get(fn)
            if job is None:
                job = self._facts[fn] = Job(fn, self)
        return job.result()

    def start(self, fn, work=None, background=True):
        """Start computing fact ``fn`` (by ``work(self)``, default ``fn``)
        on a background thread when the map is big enough (``background``
        False: later, when it is first asked for)."""
        with self._lock:
            self._facts[fn] = Job(work or fn, self,
                                  background=background and self.threaded)


def _records(run):
    """Sections 1 and 2 as native-order structured arrays (a copy when the
    file is big-endian), the vertices and the grid."""
    from ._kernels import Records
    native = {}
    for name in ("tets", "faces"):
        native[name] = np.ascontiguousarray(run.mesh.sections[name], dtype_for(name, "="))
        # read-only either way (a little-endian file's records are a view of
        # its bytes), so each kernel is compiled for one type only
        native[name].flags.writeable = False
    mesh = run.mesh
    return Records(native["tets"], native["faces"], mesh.vertices,
                   np.array(PORTAL_PAIRS, np.int64), NO_TET, NO_SLOT, mesh.bbox_min,
                   mesh.cell_size, np.array(mesh.dims, np.int64))


#: The membership test runs in this many pieces (of consecutive
#: tetrahedra) on two threads, each taking the next piece left: the work per
#: tetrahedron varies along a map, so two halves would not be even.
MEMBERSHIP_PIECES = 16


def _start_membership(run):
    """Start :func:`regn.checks.geometry.grid_pairs`: on a big map in pieces
    on two threads, joined in tetrahedron order when first asked for (so
    the same pairs)."""
    mesh = run.mesh
    split = grid_membership_split(mesh.tet_points, mesh.bbox_min, mesh.cell_size,
                                  mesh.dims, parts=MEMBERSHIP_PIECES) if run.threaded else None
    if split is None:
        run.start(geometry.grid_pairs)
        return
    pieces, finish = split
    results = [None] * len(pieces)
    left = iter(range(len(pieces)))
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                i = next(left, None)
            if i is None:
                return
            results[i] = pieces[i]()
    workers = [Job(worker, background=True) for _ in range(2)]

    def joined(_):
        for w in workers:
            w.result()
        return finish(results)
    run.start(geometry.grid_pairs, joined, background=False)


def start(mesh, original) -> Run:
    """A :class:`Run` of verify on ``mesh``, its long work started."""
    run = Run(mesh, original)
    # the membership threads first: they run kernels at once, while decoding
    # the records holds the GIL and would hold up the next thread's start
    _start_membership(run)
    run.start(tets.measures)              # decodes the records, measures the faces first
    topology.start(run)
    return run
