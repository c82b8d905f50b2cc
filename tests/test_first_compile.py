"""The first run of a command at a terminal says that it is compiling.

numba compiles regn's kernels on their first use on a machine (the quick
start's demo spends most of its first minute on that) and loads them from its
cache afterwards. The CLI says so, once, on a terminal's stderr, so that the
wait does not look like a hang; a run that only loads cached kernels, and a run
whose stderr is a pipe, say nothing.
"""

import os
import subprocess
import sys

import pytest

import regn
from conftest import random_map

NOTICE = "compiling its kernels"


def _run_on_a_terminal(args, cache_dir, stdin):
    """Run ``regn ARGS`` with stderr on a pseudo-terminal; (exit, stdout, stderr)."""
    master, slave = os.openpty()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), REGN_KERNEL_PACK="0")
    try:
        proc = subprocess.run([sys.executable, "-m", "regn", *args], input=stdin,
                              stdout=subprocess.PIPE, stderr=slave, env=env,
                              timeout=600, text=True)
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:                     # EIO: the terminal's other end is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.returncode, proc.stdout, b"".join(chunks).decode()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_run_that_compiles_says_so_once_and_a_cached_run_is_silent(tmp_path):
    path = tmp_path / "map.rgn"
    regn.save(random_map(200, seed=3), path)
    cache = tmp_path / "numba-cache"         # empty: every kernel is compiled
    code, out, err = _run_on_a_terminal(["locate", str(path)], cache, "0 0 0\n")
    assert code == 0 and out.strip()
    assert err.count(NOTICE) == 1, err
    code, out2, err = _run_on_a_terminal(["locate", str(path)], cache, "0 0 0\n")
    assert code == 0 and out2 == out
    assert NOTICE not in err, err            # loaded from the cache: nothing to say


def test_no_notice_when_stderr_is_not_a_terminal(tmp_path):
    path = tmp_path / "map.rgn"
    regn.save(random_map(200, seed=3), path)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), REGN_KERNEL_PACK="0")
    proc = subprocess.run([sys.executable, "-m", "regn", "locate", str(path)],
                          input="0 0 0\n", capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip()
    assert proc.stderr == ""
