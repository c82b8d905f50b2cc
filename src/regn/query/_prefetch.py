"""A cache-prefetch hint for the compiled search kernels.

``prefetch(array, flat_index)`` asks the CPU to start loading the cache line
holding element ``flat_index`` of a C-contiguous array, without waiting for
it. The path search issues one per neighbour before relaxing them, so the
neighbours' (cold) records arrive together instead of one miss at a time.
It changes no result.

:func:`numba_prefetch` builds the numba intrinsic (llvm.prefetch); it imports
numba, so call it only when compiling. :func:`prefetch` is the plain-Python
stand-in: a no-op.
"""


def prefetch(array, flat_index):
    """No-op outside compiled code."""


def numba_prefetch():
    """The numba intrinsic behind :func:`prefetch`."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.core.extending import intrinsic

    @intrinsic
    def _prefetch(typingctx, array, flat_index):
        def codegen(context, builder, signature, args):
            arr = context.make_array(signature.args[0])(context, builder, args[0])
            address = builder.gep(arr.data, [args[1]])
            byte_ptr = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            # read access, high temporal locality, data cache
            builder.call(fn, [builder.bitcast(address, byte_ptr), ir.Constant(i32, 0),
                              ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return types.void(array, flat_index), codegen

    return _prefetch
