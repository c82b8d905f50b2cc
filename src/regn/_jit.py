"""The one way regn compiles a kernel.

Every hot computation in regn is a numba kernel, compiled through
:func:`kernel` with the same options everywhere:

* ``cache=True`` — compiled once per machine, loaded from numba's cache after;
* ``nogil=True`` — a running kernel releases the GIL, so Python threads (and
  the callers of a service) run kernels side by side;
* ``error_model="numpy"`` — a float division by zero gives inf/NaN as in
  numpy instead of raising, so a corrupt file's NaN is data, not a crash;
* ``no_cfunc_wrapper=True`` — no C-callable wrapper (regn never passes a
  kernel as a first-class function value), less to compile;
* a kernel called from another kernel is compiled for the plain types of
  the arguments (:class:`_Dispatcher`): ``f(x, 0)`` and ``f(x, n)`` share
  one compiled ``f`` instead of two.

Kernels live in modules named ``_kernels.py`` (or ``_*_kernels.py``) beside
the code that calls them. Those modules import this one, and so numba, at
import time; the Python API imports them inside its functions, on first use,
so ``regn --help``, ``regn info`` and ``regn.load`` never import numba.

:func:`prefetch` is a cache-prefetch hint usable inside kernels (the search
kernels issue one per neighbour before relaxing them); it changes no result.

:func:`run_chunks` spreads a batch over threads: the batch is cut into
contiguous chunks and each thread calls a nogil kernel on one chunk at a time.
Every element is computed by the same code whatever chunk it falls in, so the
answers are the same for any number of workers; ``workers`` (see
:func:`worker_count`) is the knob the batch queries expose.
"""

from __future__ import annotations

import itertools
import os
import threading

from llvmlite import ir
from numba import prange, types  # noqa: F401  (prange: re-exported for kernels)
from numba.core import cgutils, event
from numba.core.extending import intrinsic
from numba.core.registry import CPUDispatcher

from . import _first_compile
from .compiling.pack import ensure as _install_kernel_pack
from .compiling.stamps import install as _install_stamped_caches

# a kernel's cache entry also goes stale when a regn module it imports changes
_install_stamped_caches()

_PACK_LOOKED = [False]

OPTIONS = dict(cache=True, nogil=True, error_model="numpy", no_cfunc_wrapper=True)


def _plain(t):
    """The type a kernel called from another kernel is compiled for: a
    constant's own type (Literal[int](0) -> int64), a signed integer
    narrower than 64 bits widened to int64 (numba's arithmetic on it is in
    int64 already), anything else as it is."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


class _Dispatcher(CPUDispatcher):
    """numba's CPU dispatcher, except that a call from another kernel is
    compiled for plain argument types (:func:`_plain`).

    numba types a constant argument by its value (``Literal[int](0)``,
    ``Literal[bool](True)``) and compiles the callee anew for each constant
    a caller passes, besides the version for a variable of that type; and
    anew for an int32 index besides an int64 one. On a machine's first run
    those extra versions were a fifth of all compiling (about 30 s of the
    first ``regn demo``). Here every such call shares one version; the
    answers are the same (the callee only keeps a test on a value that a
    constant would have folded away)."""

    def compile(self, sig):
        # A machine's first run loads the kernels shipped with regn instead
        # of compiling them: the pack is installed (once per machine) before
        # the first kernel is looked up, when every module is imported.
        if not _PACK_LOOKED[0]:
            _PACK_LOOKED[0] = True
            _install_kernel_pack()
        return super().compile(sig)

    def get_call_template(self, args, kws):
        args = tuple(_plain(a) for a in args)
        kws = {k: _plain(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def kernel(fn=None, *, parallel=False, inline=False, borrows=False):
    """Compile ``fn`` with regn's options (usable bare or with arguments).

    ``parallel=True`` lets the kernel use :data:`prange` over all of numba's
    threads; ``inline=True`` inlines a small helper into its callers.
    ``borrows=True`` compiles a helper without numba's reference counting:
    it only reads and writes the arrays it is given and allocates none (numba
    refuses to compile an allocation then). A counted helper updates the
    count of each array argument atomically on every call, which costs more
    than the work of a small helper called in a hot loop.
    """
    opts = dict(OPTIONS, nopython=True, boundscheck=None)
    cache = opts.pop("cache")
    if parallel:
        opts["parallel"] = True
    if inline:
        opts["inline"] = "always"
    if borrows:
        opts["_nrt"] = False

    def wrap(f):
        d = _Dispatcher(py_func=f, locals={}, targetoptions=opts)
        if cache:
            d.enable_caching()
        return d

    return wrap if fn is None else wrap(fn)


class _CompileWatch(event.Listener):
    """Tells :mod:`regn._first_compile` when numba starts a real compile
    (numba emits ``numba:compile`` only after its cache missed)."""

    def on_start(self, ev):
        _first_compile.fire()

    def on_end(self, ev):
        pass


event.register("numba:compile", _CompileWatch())


def entry_point(dispatcher, args):
    """The compiled entry point of kernel ``dispatcher`` for the types of
    ``args`` (compiled, or loaded from numba's cache, on first use).

    Calling it skips numba's type dispatch, which costs ~3 us for a call
    passing records (namedtuples) of arrays: worth it for a single query
    whose kernel runs for microseconds. The caller keeps it with the records
    and must pass arguments of exactly those types on every call (numba does
    not check them then)."""
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    if sig not in dispatcher.overloads:
        dispatcher.compile(sig)
    return dispatcher.overloads[sig].entry_point


@intrinsic
def prefetch(typingctx, array, flat_index):
    """Ask the CPU to start loading element ``flat_index`` of a C-contiguous
    array (read access, high locality), without waiting for it."""
    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        address = builder.gep(arr.data, [args[1]])
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(address, byte_ptr), ir.Constant(i32, 0),
                          ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(array, flat_index), codegen


def worker_count(workers=None) -> int:
    """The number of threads a batch may use: ``None`` for every core this
    process may run on, else a whole number >= 1 (QueryError otherwise)."""
    if workers is None:
        return _CORES[0] or _cores()
    from .errors import QueryError
    if isinstance(workers, bool) or not hasattr(workers, "__index__"):
        raise QueryError(f"workers must be a whole number >= 1 or None, not {workers!r}")
    if int(workers) < 1:
        raise QueryError(f"workers must be >= 1, not {int(workers)}")
    return int(workers)


_CORES = [0]


def limit_threads(n: int) -> None:
    """Let this process's batches (:func:`run_chunks`) and parallel kernels
    use at most ``n`` threads (a build worker sharing the cores with others)."""
    import numba
    _CORES[0] = max(1, int(n))
    numba.set_num_threads(min(_CORES[0], numba.config.NUMBA_NUM_THREADS))


def _cores() -> int:
    """The cores this process may run on (asked once)."""
    try:
        _CORES[0] = len(os.sched_getaffinity(0))
    except AttributeError:                  # not on Linux
        _CORES[0] = os.cpu_count() or 1
    return _CORES[0]


_POOL = []
_POOL_LOCK = threading.Lock()


def _pool():
    """One process-wide thread pool with a thread per core (made on first use)."""
    with _POOL_LOCK:
        if not _POOL:
            from concurrent.futures import ThreadPoolExecutor
            _POOL.append(ThreadPoolExecutor(max_workers=_cores(),
                                            thread_name_prefix="regn-worker"))
    return _POOL[0]


def run_chunks(fn, n, workers=None, *, chunk=65536, min_chunk=2048):
    """Call ``fn(start, stop, worker)`` over ``[0, n)`` in contiguous chunks
    on ``worker_count(workers)`` threads.

    Chunks hold at most ``chunk`` items (a caller's memory bound) and, when
    several threads are used, are cut smaller, down to ``min_chunk``, so that
    each thread gets about four of them. ``worker`` (0 .. threads-1) names
    the thread running the call, so ``fn`` can keep per-thread scratch in a
    list indexed by it. The calling thread is worker 0 and runs chunks too;
    the others come from one shared pool. Each thread takes the next
    unclaimed chunk until none is left, so uneven chunks balance out. ``fn``
    should spend its time in a nogil kernel: the threads run side by side
    only while the GIL is released. One thread (``workers=1``, or a batch of
    one chunk) runs every chunk inline, in order. Calls may nest (a worker
    thread may call run_chunks): helpers that never started are cancelled,
    not waited for, so a busy pool cannot deadlock. The first exception
    raised by ``fn`` is raised here, after every started chunk has finished.
    """
    threads = worker_count(workers)
    n = int(n)
    if n <= 0:
        return
    n_chunks = max(-(-n // chunk), min(4 * threads, n // min_chunk))
    size = -(-n // n_chunks)
    n_chunks = -(-n // size)
    threads = min(threads, n_chunks)
    claim = itertools.count()              # next() on it is atomic under the GIL

    def work(worker):
        while True:
            j = next(claim)
            if j >= n_chunks:
                return
            fn(j * size, min(n, (j + 1) * size), worker)

    helpers = [_pool().submit(work, w) for w in range(1, threads)]
    try:
        work(0)
    finally:
        for h in helpers:
            h.cancel()                     # never started: nothing left to do
        for h in helpers:
            if not h.cancelled():
                h.result()                 # re-raises a helper's exception


# --- copies inside kernels ------------------------------------------------------------
# numba compiles an array-to-array slice assignment (``a[i, :] = b[j]``) with a
# check that formats both shapes into the error message; that formatter (str,
# join, f-strings) is compiled into every kernel holding such an assignment and
# into every kernel calling one: about 0.2 s of compiling each on a first run.
# These loops copy the same values with nothing to format.

@kernel(borrows=True)
def copy_rows(dst, d0, src, s0, n):
    """``dst[d0:d0 + n, :] = src[s0:s0 + n, :]`` (2-D arrays, rows of
    dst's width, copied in order)."""
    for i in range(n):
        for j in range(dst.shape[1]):
            dst[d0 + i, j] = src[s0 + i, j]


@kernel(borrows=True)
def set_row(dst, i, v):
    """``dst[i, :] = v`` (v 1-D, at least dst's width)."""
    for j in range(dst.shape[1]):
        dst[i, j] = v[j]


@kernel(borrows=True)
def copy_items(dst, d0, src, s0, n):
    """``dst[d0:d0 + n] = src[s0:s0 + n]`` (1-D arrays, copied in order)."""
    for i in range(n):
        dst[d0 + i] = src[s0 + i]

