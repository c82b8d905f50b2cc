"""The fuzzers' per-input CPU-time limit, paused while numba compiles.

The limit is SIGPROF from ITIMER_PROF (process CPU time, so a busy machine
does not fake a hang). Compiling a kernel the first time an input reaches it
can take longer than the limit on a cold cache (a fresh CI machine), and a
signal raised inside numba's compiler leaves the kernel unusable for the
rest of the process ("no compiled object yet"). So the timer stops when numba
starts a compile and resumes, with the time it had left, when it ends: the
limit measures running, not compiling.
"""

from __future__ import annotations

import signal

from numba.core import event


class Timeout(BaseException):
    """Raised by SIGPROF; a BaseException so that the library's ``except
    Exception`` does not swallow it."""


def _alarm(signum, frame):
    raise Timeout()


class _PauseWhileCompiling(event.Listener):
    def __init__(self):
        self.depth = 0          # compiles nest: a kernel compiles its callees
        self.left = 0.0

    def on_start(self, ev):
        if self.depth == 0:
            self.left = signal.setitimer(signal.ITIMER_PROF, 0)[0]
        self.depth += 1

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0 and self.left > 0:
            signal.setitimer(signal.ITIMER_PROF, self.left)
            self.left = 0.0


_PAUSE = _PauseWhileCompiling()
event.register("numba:compile", _PAUSE)


def arm(seconds: float) -> None:
    """Raise :class:`Timeout` after ``seconds`` of CPU time spent outside
    numba's compiler."""
    signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)


def disarm() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)
    _PAUSE.left = 0.0
