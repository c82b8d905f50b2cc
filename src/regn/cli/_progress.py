"""The one progress display of the CLI: phase, percentage and time left on
one line of stderr, only at a terminal and only once the work passes
:data:`QUIET_SECONDS` (so piped output and --json stay clean)."""

from __future__ import annotations

import sys
import time

#: Nothing is shown before this many seconds.
QUIET_SECONDS = 1.0
WIDTH = 30


def shows_progress(args, stream=None) -> bool:
    """Whether a command run with ``args`` draws progress on ``stream``
    (stderr): only at a terminal, and never with ``--json`` (a caller
    reading JSON wants nothing but the document, even at a terminal)."""
    stream = stream or sys.stderr
    if getattr(args, "json", False):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """A callable ``progress(phase, fraction)``; :meth:`close` wipes the line.
    ``Progress.for_args(args)`` is quiet where :func:`shows_progress` says."""

    def __init__(self, stream=None, *, quiet=False):
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.shown = 0                  # the longest line drawn (what close wipes)
        self.tty = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())

    @classmethod
    def for_args(cls, args, stream=None):
        return cls(stream, quiet=not shows_progress(args, stream))

    def __call__(self, phase, frac):
        """``frac`` None: the share is not known (a stream of queries from a
        pipe): the phase and the time so far, without a bar."""
        elapsed = time.perf_counter() - self.t0
        if not self.tty or elapsed < QUIET_SECONDS:
            return
        if frac is None:
            line = f"{phase} ({elapsed:.0f} s)"
        else:
            frac = min(max(float(frac), 0.0), 1.0)
            n = round(WIDTH * frac)
            left = f"{elapsed * (1 - frac) / frac:.0f} s left" if 0.05 <= frac < 1 else ""
            line = f"[{'#' * n}{' ' * (WIDTH - n)}] {100 * frac:3.0f}% {phase:<16} {left:<12}"
        self.stream.write("\r" + line.ljust(self.shown))    # over a longer line before
        self.stream.flush()
        self.shown = max(self.shown, len(line))

    def close(self):
        if self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0
