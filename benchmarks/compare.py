"""Side-by-side timing for the comparison benches (not part of the tests).

A comparison times regn and one alternative on the same inputs in the same
process, in interleaved rounds (regn, alternative, alternative, regn, …), so
that the slow spells of a shared machine fall on both; it keeps each round's
ratio, compares the answers, and measures each side's peak memory on a run
of its own. :func:`print_table` prints the rows as one Markdown table.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Row:
    """One comparison: times are seconds per round (a batch's time, or the
    median time of one call); ``agree`` of ``total`` answers are the same."""

    query: str
    map: str
    alternative: str
    regn: list
    alt: list
    agree: int
    total: int
    peak_regn: float | None = None      # bytes above the resident set before the run
    peak_alt: float | None = None
    goal: float | None = None           # the goal for alt / regn, if any
    command: str = ""
    note: str = ""
    per_call: bool = False              # times are per call (µs) rather than per batch
    cores: tuple = (None, None)         # CPU time / wall time of a batch, regn and alt

    @property
    def ratios(self):
        return [a / r for r, a in zip(self.regn, self.alt)]


@dataclass
class Side:
    """How to run one side of a comparison: ``round()`` returns the seconds one
    round took; ``answer`` is what its first round returned."""

    run: object                 # () -> answers, the whole batch
    per_call: list | None = None  # [() -> answer], timed one by one (median)
    times: list = field(default_factory=list)
    cpu: list = field(default_factory=list)     # process CPU time of each batch round
    answer: object = None

    @property
    def cores(self):
        """CPU time over wall time of its fastest batch (all threads count)."""
        if not self.cpu:
            return None
        best = int(np.argmin(self.times))
        return self.cpu[best] / self.times[best]

    def round(self):
        if self.per_call is None:
            c0, t0 = time.process_time(), time.perf_counter()
            out = self.run()
            self.times.append(time.perf_counter() - t0)
            self.cpu.append(time.process_time() - c0)
        else:
            out, ts = [], []
            for call in self.per_call:
                t0 = time.perf_counter()
                out.append(call())
                ts.append(time.perf_counter() - t0)
            self.times.append(float(np.median(ts)))
        if self.answer is None:
            self.answer = out


def side_by_side(mine: Side, theirs: Side, rounds=3):
    """Warm both (one untimed call each: compilation, caches, locators), then
    ``rounds`` interleaved rounds, the order swapped each round."""
    for side in (mine, theirs):
        (side.per_call[0] if side.per_call else side.run)()
    for r in range(rounds):
        for side in ((mine, theirs) if r % 2 == 0 else (theirs, mine)):
            side.round()
    return mine.times, theirs.times


def peak_memory(f):
    """Bytes ``f()`` adds to the process at its peak. On Linux with glibc: the
    resident set's high-water mark (reset first) above the resident set
    before, with freed memory handed back to the system first and, during
    the run, every block of 64 KiB or more mapped on its own, so that memory
    reused from earlier runs still counts and native allocations (VTK,
    libigl, numba) too. Elsewhere: the Python and numpy allocations
    tracemalloc sees."""
    try:
        libc = _glibc()
        libc.malloc_trim(0)
        libc.mallopt(_M_MMAP_THRESHOLD, 64 << 10)
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")                   # resets VmHWM to the current VmRSS
            before = _status_kb("VmRSS")
            f()
            return (_status_kb("VmHWM") - before) * 1024.0
        finally:
            # glibc's own ceiling for its sliding threshold: blocks under
            # 32 MiB come from the heap again, as after a warm-up
            libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    except OSError:
        tracemalloc.start()
        f()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return float(peak)


_M_MMAP_THRESHOLD = -3


def _glibc():
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim, libc.mallopt             # glibc only
    except (OSError, AttributeError):
        raise OSError("not glibc") from None
    return libc


def _status_kb(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise OSError(f"no {key} in /proc/self/status")


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _span(values, scale, unit, digits):
    lo, hi = min(values) * scale, max(values) * scale
    fmt = f"{{:.{digits}f}}"
    return (fmt.format(lo) if fmt.format(lo) == fmt.format(hi)
            else f"{fmt.format(lo)}–{fmt.format(hi)}") + f" {unit}"


def _time(values, per_call):
    if per_call:
        return _span(values, 1e6, "µs", 1 if max(values) < 1e-4 else 0)
    return _span(values, 1.0, "s", 3 if max(values) < 1 else 2)


def _cores(pair):
    return " / ".join("–" if c is None else f"{c:.1f}" for c in pair)


def _mb(b):
    return "–" if b is None else f"{b / 2**20:.0f}"


def print_table(rows, file=None):
    """The rows as a Markdown table: times as ranges over the rounds, the
    ratio as the median of the rounds' ratios (their range in brackets); a
    goal is met when that median reaches it."""
    print("| query | map | regn | alternative | its time | alt / regn: median (rounds) "
          "| same answers | peak MB regn / alt | CPU/wall regn / alt | goal | command |",
          file=file)
    print("|---|---|---|---|---|---|---|---|---|---|---|", file=file)
    for r in rows:
        ratios = r.ratios
        mid = float(np.median(ratios))
        goal = "" if r.goal is None else (
            f"≥ {r.goal:g}×: " + ("met" if mid >= r.goal else
                                   f"missed by {r.goal / mid:.2f}×"))
        print(f"| {r.query} | {r.map} | {_time(r.regn, r.per_call)} | {r.alternative} "
              f"| {_time(r.alt, r.per_call)} | {mid:.1f}× ({_span(ratios, 1, '', 1).strip()}) "
              f"| {r.agree} / {r.total} | {_mb(r.peak_regn)} / {_mb(r.peak_alt)} "
              f"| {_cores(r.cores)} | {goal} | `{r.command}` |", file=file)
    for i, r in enumerate(rows):
        if r.note:
            print(f"- row {i + 1}: {r.note}", file=file)


def count(n):
    """1000000 -> '1 000 000'."""
    return f"{n:,}".replace(",", " ")
