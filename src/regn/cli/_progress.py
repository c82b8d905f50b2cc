"""The one progress display of the CLI: phase, percentage and time left on
one line of stderr, only at a terminal and only once the work passes
:data:`QUIET_SECONDS` (so piped output and --json stay clean)."""

from __future__ import annotations

import sys
import time

#: Nothing is shown before this many seconds.
QUIET_SECONDS = 1.0
WIDTH = 30


class Progress:
    """A callable ``progress(phase, fraction)``; :meth:`close` wipes the line."""

    def __init__(self, stream=None, *, quiet=False):
        self.stream = stream or sys.stderr
        self.t0 = time.perf_counter()
        self.shown = False
        self.tty = not quiet and bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, phase, frac):
        elapsed = time.perf_counter() - self.t0
        if not self.tty or elapsed < QUIET_SECONDS:
            return
        frac = min(max(float(frac), 0.0), 1.0)
        n = round(WIDTH * frac)
        left = f"{elapsed * (1 - frac) / frac:.0f} s left" if 0.05 <= frac < 1 else ""
        self.stream.write(f"\r[{'#' * n}{' ' * (WIDTH - n)}] {100 * frac:3.0f}% "
                          f"{phase:<16}{left:<16}")
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\r" + " " * (WIDTH + 56) + "\r")
            self.stream.flush()
