"""Compiling regn's kernels ahead, on every core, into numba's cache.

regn's hot paths are numba kernels, compiled on their first use on a machine
and loaded from numba's cache after. A command's first run on a machine
(``regn demo`` after ``pip install``, a CI run, an upgrade) would compile
them one after another on one core. Instead, when the kernels a command
needs are not in the cache, :func:`regn.compiling.pool.compile_ahead` starts one worker process
per core, each compiling a *job* (a group of kernels: :mod:`.jobs`) by
calling the public functions that use them on a small map; the command goes
on meanwhile and waits for a job only before the step that needs it, then
loads its kernels from the cache. With the cache warm it starts nothing.

* ``REGN_COMPILE_AHEAD``: unset or ``auto`` starts workers only when the
  machine has idle cores (:func:`regn.compiling.pool.spare_cores`); ``1``
  always; ``0`` never (the command compiles what it needs itself, as before).
* A read-only or unusable cache, a worker that cannot start or fails: the
  command compiles what it needs itself; nothing fails because of it.
* :mod:`.stamps`: a cached kernel is recompiled when its file *or any regn
  module it imports* changed (numba alone looks at the kernel's own file).

``python -m regn.compiling JOB ...`` runs jobs in the current process (what
a worker does).
"""

from .threads import wait_passively

# before numba can load its OpenMP layer: regn._jit imports this package
# first (see .threads)
wait_passively()
