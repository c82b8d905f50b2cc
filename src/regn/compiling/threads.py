"""How numba's worker threads wait between regn's parallel loops.

regn's batch work runs many short parallel loops with Python in between (a
level build makes dozens of wall-distance calls). numba runs them on GNU
OpenMP threads where libgomp is present, and those spin after each loop by
default, on every core, until the next: the demo hangar's build took 6.5 CPU
s for 3.6 s of wall time, 3.7 CPU s and 3.4 s with the threads waiting
passively (asleep until the next loop). Spinning costs a core that anything
else on the machine (another build, a game client, a test worker) needs.

So regn asks for passive waiting, ``OMP_WAIT_POLICY=PASSIVE``, unless the
process already set ``OMP_WAIT_POLICY`` itself. OpenMP reads it once, when
numba first loads its OpenMP layer (at the first parallel loop); this runs
when :mod:`regn._jit` is imported, before any kernel exists.
"""

from __future__ import annotations

import os


def wait_passively() -> None:
    """Ask OpenMP's threads to sleep between loops, unless told otherwise."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
