"""Worker processes that compile jobs into numba's cache while a command runs.

:func:`compile_ahead` looks whether each job's kernels are cached (one index
file read per job); for those that are not, it starts up to one worker
process per core (``python -m regn.compiling``, which imports the same regn
files as this process, so it fills the same cache) and hands each the next
job whose prerequisites are done. It returns an :class:`Ahead` at once: the
command goes on, and calls :meth:`Ahead.wait` before a step that needs a
job's kernels, so that it loads them from the cache instead of compiling
them a second time. Nothing here can make a command fail: a worker that
cannot start, fails or is slow only means the command compiles what it
needs itself, as it would without compile-ahead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from .plan import JOBS

#: the environment variable that sets compile-ahead: "0" (or off, no, false)
#: never, "1" (or on, yes, true) always, unset or "auto": when the machine has
#: cores to spare (:func:`spare_cores`)
ENV = "REGN_COMPILE_AHEAD"
#: "auto" starts workers only when at least this many cores sit idle: on a
#: machine already busy they would share its cores with the command and only
#: add their own start-up and the warm-up calls' extra kernels (measured:
#: 171 s against 138 s for a first demo at a load average of 2-3 on 2 cores)
MIN_SPARE_CORES = 1.5


def _setting() -> str:
    value = os.environ.get(ENV, "auto").strip().lower()
    if value in ("0", "off", "no", "false"):
        return "off"
    return "on" if value in ("1", "on", "yes", "true") else "auto"


def enabled() -> bool:
    """Compile-ahead is on unless ``REGN_COMPILE_AHEAD`` says off."""
    return _setting() != "off"


def spare_cores() -> float:
    """Cores this process may use less the 1-minute load average (all of
    them where the load cannot be read)."""
    try:
        return _cores() - os.getloadavg()[0]
    except (OSError, AttributeError):
        return float(_cores())


def is_cached(job) -> bool:
    """Whether job ``job``'s telltale kernel has an entry in numba's cache
    for this machine and these sources (True too when that cannot be told:
    then nothing is started)."""
    module, name, _ = JOBS[job]
    try:
        import importlib

        from .pack import ensure
        ensure()                                # the shipped kernels first
        disp = getattr(importlib.import_module(module), name)
        cache = disp._cache                     # numba's FunctionCache (cache=True)
        magic = disp.targetctx.codegen().magic_tuple()
        index = cache._cache_file._load_index()
        return any(key[1] == magic for key in index)
    except Exception:                           # noqa: BLE001 (a guess, never an error)
        return True


def _cores() -> int:
    from .._jit import worker_count
    return worker_count(None)


class Ahead:
    """The jobs being compiled in other processes for this command."""

    def __init__(self, jobs, workers):
        self.pending = list(jobs)          # not yet handed out, in order
        self.running = {}                  # job -> worker process
        self.done = set()
        self.lock = threading.Condition()
        self.procs = []
        self.t0 = time.perf_counter()
        self.total = len(jobs)
        #: called as report(jobs done, jobs in all, seconds) while :meth:`wait` waits
        self.report = None
        env = dict(os.environ, **{ENV: "0"})
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        for _ in range(min(workers, len(jobs))):
            try:
                p = subprocess.Popen([sys.executable, "-m", "regn.compiling"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
            except OSError:
                break
            self.procs.append(p)
            threading.Thread(target=self._feed, args=(p,), daemon=True).start()
        if not self.procs:                 # nothing started: nothing to wait for
            self.done.update(self.pending)
            self.pending = []
        else:                              # the CLI says, at a terminal, why it waits
            from .. import _first_compile
            _first_compile.fire()

    def _next(self):
        """The next job whose prerequisites are done (None: wait; "" : none left)."""
        for job in self.pending:
            if all(d in self.done or d not in JOBS or d not in self._all() for d in JOBS[job][2]):
                self.pending.remove(job)
                return job
        return None if self.pending else ""

    def _all(self):
        return set(self.pending) | set(self.running) | self.done

    def _feed(self, proc):
        """Hand ``proc`` jobs one at a time until none is left."""
        job = None
        try:
            while True:
                with self.lock:
                    job = self._next()
                    while job is None:
                        self.lock.wait()
                        job = self._next()
                    if job == "":
                        break
                    self.running[job] = proc
                proc.stdin.write(job + "\n")
                proc.stdin.flush()
                proc.stdout.readline()           # "<job> ok" or "<job> failed": either way done
                with self.lock:
                    self.running.pop(job, None)
                    self.done.add(job)
                    job = None
                    self.lock.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self.lock:                       # a dead worker: its job counts as done
                if job:
                    self.running.pop(job, None)
                    self.done.add(job)
                if not any(p.poll() is None and p is not proc for p in self.procs):
                    self.done.update(self.pending)
                    self.pending = []
                self.lock.notify_all()
            try:
                proc.stdin.close()
            except OSError:
                pass

    def wait(self, *jobs, timeout=None) -> None:
        """Return once ``jobs`` (all of them when none are named) are compiled,
        failed, or never started."""
        want = set(jobs) if jobs else None
        deadline = None if timeout is None else time.perf_counter() + timeout
        with self.lock:
            while True:
                left = (want or self._all()) - self.done
                left &= self._all()
                if not left:
                    return
                rest = None if deadline is None else deadline - time.perf_counter()
                if rest is not None and rest <= 0:
                    return
                if self.report is not None:
                    self.report(len(self.done & self._all()), self.total,
                                time.perf_counter() - self.t0)
                self.lock.wait(min(rest, 0.5) if rest is not None else 0.5)

    def progress(self):
        """(jobs done, jobs in all, seconds since the start)."""
        with self.lock:
            return len(self.done & self._all()), self.total, time.perf_counter() - self.t0

    def close(self):
        """Wait for the workers to exit (they do once no job is left)."""
        self.wait()
        for p in self.procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


class _Nothing:
    """What compile-ahead returns when there is nothing to compile."""
    total = 0
    report = None

    def wait(self, *jobs, timeout=None):
        pass

    def progress(self):
        return 0, 0, 0.0

    def close(self):
        pass


def compile_ahead(jobs, workers=None):
    """Start compiling the uncached ``jobs`` (names of :data:`JOBS`) in up to
    ``workers`` processes (None: one per core), when ``REGN_COMPILE_AHEAD``
    allows it (unset: when the machine has cores to spare); an object whose ``wait(job)``
    returns once ``job`` is in the cache (or could not be compiled ahead)."""
    setting = _setting()
    if setting == "off" or (setting == "auto" and spare_cores() < MIN_SPARE_CORES):
        return _Nothing()
    cold = [j for j in jobs if j in JOBS and not is_cached(j)]
    if not cold:
        return _Nothing()
    return Ahead(cold, workers or _cores())
