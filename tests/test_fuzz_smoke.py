"""A fixed-seed run of the structure-aware fuzzer (fuzz/run.py) must find
nothing; kept regression inputs (tests/fixtures/fuzz-*.rgn) must be rejected
with a RegnError or load cleanly, never crash."""

import glob
import os
import re
import sys

import numpy as np
import pytest

import regn
from regn.errors import RegnError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "fuzz"))

import mutate  # noqa: E402
import run  # noqa: E402

#: Finding kinds open in files this suite does not own (see docs/reliability.md):
#: kind -> reason. The smoke run tolerates them; their fixtures are xfail.
KNOWN_OPEN = {}
#: Open findings too heavy to run in the suite (skipped with the reason).
#: None now: raycast on corrupted adjacency and locate on a flat header box
#: were fixed; their fixtures run below as regression tests.
HEAVY_OPEN = {}

FIXTURES = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "fuzz-*.rgn")))


def test_mutator_is_reproducible_and_mutates():
    bases = mutate.make_bases()
    a = [mutate.input_for(bases, 5, i) for i in range(40)]
    b = [mutate.input_for(bases, 5, i) for i in range(40)]
    assert a == b
    originals = {x.data for x in bases}
    assert sum(data not in originals for data, _ in a) >= 35


def test_every_region_gets_hit():
    bases = mutate.make_bases()
    seen = set()
    for i in range(400):
        seen.update(w.split("@")[0].split()[-1] for w in
                    mutate.input_for(bases, 9, i)[1].split("; ") if "@" in w)
    for region in ("chunk_header", "header", "header_counts", "header_ptrs",
                   "vertices", "tets", "faces", "face_sentinels", "cells", "items",
                   "refs", "pof0_header", "pof0_size", "pof0_table"):
        assert region in seen, region


def test_fixed_seed_smoke_run_finds_nothing(tmp_path):
    # 500 inputs: every one of the mutator's 80 kinds of change (operation and
    # region) this seed makes in 1000 is among them; the long campaigns are
    # fuzz/campaign.sh's. tracemalloc on 20 of them (fuzz/run.py's default: 1 in
    # 100; it slows an input ~6x); the peak-RSS bound is checked on every input
    r = run.campaign(20261202, 500, jobs=1, timeout=2.0, outdir=str(tmp_path),
                     trace_every=25)
    assert r["count"] == 500
    new = [f for f in r["findings"] if f[1] not in KNOWN_OPEN]
    assert new == [], new
    assert r["tags"].get("rejected", 0) > 50 and r["tags"].get("loaded", 0) > 20


@pytest.mark.parametrize("path", FIXTURES, ids=[os.path.basename(p) for p in FIXTURES])
def test_regression_fixture(path, tmp_path, request):
    kind = os.path.basename(path)[len("fuzz-"):].split("-s")[0]
    if kind in HEAVY_OPEN:
        pytest.skip(HEAVY_OPEN[kind])
    if kind in KNOWN_OPEN:
        # runs, and turns into XPASS once the owner fixes it
        request.node.add_marker(pytest.mark.xfail(reason=KNOWN_OPEN[kind],
                                                  raises=run.Finding))
    data = open(path, "rb").read()
    try:
        m = regn.loads(data)
        m.vertices
        m.pof0_dialect
    except RegnError:
        return
    # the query points of the campaign input it came from: ...-s<seed>-i<index>
    seed, index = (int(x) for x in re.search(r"-s(\d+)-i(\d+)", path).groups())
    run.run_one(data, str(tmp_path / "x.rgn"), np.random.default_rng([seed, index, 1]))


def test_query_fuzz_smoke_run_finds_nothing():
    """fuzz/queries.py on a fixed seed: adversarial points on valid maps
    (vertices, edges, faces, box walls, NaN/inf, huge, tiny, slivers)."""
    import queries
    findings, slowest = queries.campaign(seed=11, start=0, count=300)
    assert findings == []


def test_the_fuzzers_cpu_limit_stops_while_numba_compiles():
    """A cold numba cache (a fresh CI machine) compiles kernels inside the
    timed inputs: the limit must not fire in the compiler (which would leave
    the kernel unusable), yet must still stop a long run."""
    import time

    import cpu_limit
    import numba

    @numba.njit(cache=False)
    def fresh(n):             # never compiled before this test: a real compile
        s = 0.0
        for i in range(n):
            s += np.sqrt(i) * np.sin(i)
        return s

    cpu_limit.arm(0.02)       # far less than numba takes to compile `fresh`
    try:
        assert fresh(10) == sum(np.sqrt(i) * np.sin(i) for i in range(10))
    finally:
        cpu_limit.disarm()
    with pytest.raises(cpu_limit.Timeout):
        cpu_limit.arm(0.05)
        try:
            t0 = time.process_time()
            while time.process_time() - t0 < 5:
                pass
        finally:
            cpu_limit.disarm()
