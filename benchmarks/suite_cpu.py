"""Where the test suite's CPU goes: a pytest plugin that records, for every
test, the CPU seconds of its process and of the child processes it waited
for (a subprocess's, a process pool's), and a report that adds them up by
file (not part of the tests).

    SUITE_CPU_OUT=/tmp/suite-cpu PYTHONPATH=benchmarks \\
        python -m pytest -q -p suite_cpu
    python benchmarks/suite_cpu.py /tmp/suite-cpu [--top 30]

Each pytest process (each xdist worker) writes its rows to
``SUITE_CPU_OUT.<pid>`` as JSON: ``[test id, own CPU s, children's CPU s,
wall s]``. CPU spent by processes a test does not wait for (a detached
service, a browser's helper processes, a dask cluster's workers) is not
counted; the machine's total (``time`` around pytest) is.
"""

import json
import os
import resource
import time

_ROWS = []


def _cpu(who):
    u = resource.getrusage(who)
    return u.ru_utime + u.ru_stime


try:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        yield
        _ROWS.append((item.nodeid, _cpu(resource.RUSAGE_SELF) - own,
                      _cpu(resource.RUSAGE_CHILDREN) - children, time.perf_counter() - t0))

    def pytest_sessionfinish(session):
        if _ROWS:
            out = os.environ.get("SUITE_CPU_OUT", "suite-cpu")
            with open(f"{out}.{os.getpid()}", "w") as f:
                json.dump(_ROWS, f)
except ImportError:             # the report below needs no pytest
    pass


def report(prefix, top=30):
    """Print the rows written under ``prefix`` added up: the totals, each
    worker's wall and CPU, the files by CPU, the slowest tests."""
    import glob
    from collections import defaultdict
    rows, workers = [], []
    for name in sorted(glob.glob(f"{prefix}.*")):
        with open(name) as f:
            got = json.load(f)
        rows += got
        workers.append((name, len(got), sum(r[3] for r in got), sum(r[1] + r[2] for r in got)))
    files = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for test, own, children, wall in rows:
        f = files[test.split("::")[0]]
        f[0] += own
        f[1] += children
        f[2] += wall
        f[3] += 1
    print(f"{len(rows)} tests: own CPU {sum(r[1] for r in rows):.0f} s, children "
          f"{sum(r[2] for r in rows):.0f} s, wall {sum(r[3] for r in rows):.0f} s")
    for name, n, wall, cpu in workers:
        print(f"  {name}: {n} tests, wall {wall:.0f} s, CPU {cpu:.0f} s")
    print("\nfile | own CPU s | children s | wall s | tests")
    for name, (own, children, wall, n) in sorted(files.items(),
                                                  key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        print(f"{name} | {own:.1f} | {children:.1f} | {wall:.1f} | {n}")
    print("\ntest | own CPU s | children s | wall s")
    for test, own, children, wall in sorted(rows, key=lambda r: -(r[1] + r[2]))[:top]:
        print(f"{test} | {own:.1f} | {children:.1f} | {wall:.1f}")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix", help="the SUITE_CPU_OUT the suite ran with")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    report(a.prefix, a.top)
