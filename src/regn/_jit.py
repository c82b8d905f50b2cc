"""The one way regn compiles a kernel.

Every hot computation in regn is a numba kernel, compiled through
:func:`kernel` with the same options everywhere:

* ``cache=True`` — compiled once per machine, loaded from numba's cache after;
* ``nogil=True`` — a running kernel releases the GIL, so Python threads (and
  the callers of a service) run kernels side by side;
* ``error_model="numpy"`` — a float division by zero gives inf/NaN as in
  numpy instead of raising, so a corrupt file's NaN is data, not a crash.

Kernels live in modules named ``_kernels.py`` (or ``_*_kernels.py``) beside
the code that calls them. Those modules import this one, and so numba, at
import time; the Python API imports them inside its functions, on first use,
so ``regn --help``, ``regn info`` and ``regn.load`` never import numba.

:func:`prefetch` is a cache-prefetch hint usable inside kernels (the search
kernels issue one per neighbour before relaxing them); it changes no result.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import prange, types  # noqa: F401  (prange: re-exported for kernels)
from numba.core import cgutils
from numba.core.extending import intrinsic

OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


def kernel(fn=None, *, parallel=False, inline=False):
    """Compile ``fn`` with regn's options (usable bare or with arguments).

    ``parallel=True`` lets the kernel use :data:`prange` over all of numba's
    threads; ``inline=True`` inlines a small helper into its callers.
    """
    opts = dict(OPTIONS)
    if parallel:
        opts["parallel"] = True
    if inline:
        opts["inline"] = "always"

    def wrap(f):
        return numba.njit(**opts)(f)

    return wrap if fn is None else wrap(fn)


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
