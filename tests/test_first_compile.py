"""The first run of a command at a terminal says that it is compiling.

numba compiles regn's kernels on their first use on a machine (the quick
start's demo spends most of its first minute on that) and loads them from its
cache afterwards. The CLI says so, once, on a terminal's stderr, so that the
wait does not look like a hang; a run that only loads cached kernels, and a run
whose stderr is a pipe, say nothing.

The notice is about *a* compile, not how many: each test starts from a cache
that holds every kernel ``regn locate`` needs (the shipped pack, or what a
first run compiled) less one of them, ``locate_point``, so each run that is
meant to compile compiles that one kernel (and the test checks that it did)
rather than the whole command's kernels again.
"""

import glob
import os
import shutil
import subprocess
import sys

import pytest

import regn
from conftest import random_map

NOTICE = "compiling its kernels"
#: the kernel the tests take out of the cache (``regn locate`` uses it)
KERNEL = "_locate_kernels.locate_point-*"


def _env(cache_dir):
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """(map, a cache folder holding every kernel ``regn locate`` needs)."""
    d = tmp_path_factory.mktemp("first_compile")
    path = d / "map.rgn"
    regn.save(random_map(200, seed=3), path)
    proc = subprocess.run([sys.executable, "-m", "regn", "locate", str(path)], input="0 0 0\n",
                          capture_output=True, text=True, env=_env(d / "cache"), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert glob.glob(str(d / "cache" / "**" / KERNEL), recursive=True)
    return path, d / "cache"


def _cache_less_one_kernel(warm, tmp_path):
    """A copy of the warm cache without KERNEL's entries."""
    cache = tmp_path / "numba-cache"
    shutil.copytree(warm[1], cache)
    gone = glob.glob(str(cache / "**" / KERNEL), recursive=True)
    assert gone
    for f in gone:
        os.remove(f)
    return cache


def _compiled_again(cache):
    return bool(glob.glob(str(cache / "**" / KERNEL), recursive=True))


def _run_on_a_terminal(args, cache_dir, stdin):
    """Run ``regn ARGS`` with stderr on a pseudo-terminal; (exit, stdout, stderr)."""
    master, slave = os.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "regn", *args], input=stdin,
                              stdout=subprocess.PIPE, stderr=slave, env=_env(cache_dir),
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
def test_a_run_that_compiles_says_so_once_and_a_cached_run_is_silent(warm, tmp_path):
    path = warm[0]
    cache = _cache_less_one_kernel(warm, tmp_path)
    code, out, err = _run_on_a_terminal(["locate", str(path)], cache, "0 0 0\n")
    assert code == 0 and out.strip()
    assert _compiled_again(cache)            # this run compiled
    assert err.count(NOTICE) == 1, err
    code, out2, err = _run_on_a_terminal(["locate", str(path)], cache, "0 0 0\n")
    assert code == 0 and out2 == out
    assert NOTICE not in err, err            # loaded from the cache: nothing to say


def test_no_notice_when_stderr_is_not_a_terminal(warm, tmp_path):
    path = warm[0]
    cache = _cache_less_one_kernel(warm, tmp_path)
    proc = subprocess.run([sys.executable, "-m", "regn", "locate", str(path)],
                          input="0 0 0\n", capture_output=True, text=True, env=_env(cache),
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip()
    assert _compiled_again(cache)            # this run compiled
    assert proc.stderr == ""


@pytest.mark.parametrize("given", [None, "ACTIVE"])
def test_openmp_threads_wait_passively_unless_the_process_says(given):
    """regn asks numba's OpenMP threads to sleep between parallel loops
    (OMP_WAIT_POLICY=PASSIVE: spinning ones took a second core through a
    level build), set when regn's kernels are first imported; a policy the
    process set itself stays."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    code = "import os, regn._jit; print(os.environ.get('OMP_WAIT_POLICY'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == (given or "PASSIVE")
