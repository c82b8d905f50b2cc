"""Imported once by the server that a local build pool's workers of one
thread each are forked from (multiprocessing's ``forkserver``,
:func:`regn.world.tiles.pool_context`; numba is imported for one thread):
the modules a tile's build reads, and numba's CPU target set up (its
registries import much of numba and scipy.linalg: about 0.6 s). A worker
forked from the server starts with all of that done instead of paying it
again, as a spawned one would (`benchmarks/bench_pool_start.py`: the
README's world on 2 workers, 8.6 CPU s instead of 11.3).

Nothing here starts a thread or compiles a kernel: a process that has
started threads must not fork.
"""

from numba.core.registry import cpu_target

from ..builder import generate  # noqa: F401
from ..format import reader  # noqa: F401
from . import links, prepared  # noqa: F401

cpu_target.target_context.refresh()
cpu_target.typing_context.refresh()
