"""``regn serve MAP --background``: a warm service that ``regn path`` and
``regn raycast`` ask instead of loading the map, answering exactly as the
command would have in its own process."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest

import regn
from conftest import run_commands_in_one_process

SRC = os.path.dirname(os.path.dirname(regn.__file__))


def _env(runtime, **extra):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), PYTHONPATH=SRC, **extra)
    env.pop("REGN_WARM", None)
    env.update(extra)
    return env


@pytest.fixture
def short_dir():
    """A directory with a short path (a Unix socket's path is at most 107
    bytes; pytest's tmp_path can be longer: regn then uses /tmp/regn-UID)."""
    d = tempfile.mkdtemp(prefix="rw", dir="/tmp")
    os.chmod(d, 0o700)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def cli(runtime, *args, **extra):
    return subprocess.run([sys.executable, "-m", "regn", *map(str, args)],
                          capture_output=True, text=True, env=_env(runtime, **extra), check=False,
                          timeout=600)


def status(runtime, path):
    code = ("import json, sys; from regn.cli import warm; "
            f"print(json.dumps(warm.status({str(path)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=_env(runtime), check=True).stdout
    return json.loads(out)


@pytest.fixture(scope="module")
def served(tmp_path_factory, holes_map):
    """(runtime dir, map path, a query, its answer) with a warm service running
    for the map, started as a shell loop starts it: by the second of two
    queries that each loaded the map."""
    where = tmp_path_factory.mktemp("warm")
    runtime = tempfile.mkdtemp(prefix="rw", dir="/tmp")
    path = where / "holes.rgn"
    regn.save(holes_map, path)
    a, b = holes_map.random_points(2, seed=7)
    q = ["path", str(path), *map(str, (*a, *b))]
    first, second = run_commands_in_one_process([q, q], None, _env(runtime))
    assert first == second and first[0] == 0 and first[2] == ""     # no note when piped
    for _ in range(1200):                       # its service loads in the background
        if list(Path(runtime, "regn").glob("*.sock")):
            break
        time.sleep(0.1)
    yield runtime, path, q, first
    cli(runtime, "serve", path, "--stop")
    shutil.rmtree(runtime, ignore_errors=True)


def _queries(mesh):
    a, b = mesh.random_points(2, seed=4)
    far = b * 100.0                               # outside the map
    ab = [*a, *b]
    return [["path", *ab], ["path", *ab, "--json"], ["path", *ab, "--no-smooth"],
            ["path", *ab, "--radius", 2000.0, "--json"], ["path", *a, *far],
            ["path", *ab, "--block-sphere", *((a + b) / 2), 500.0],
            ["path", *ab, "--radius", -1], ["raycast", *ab], ["raycast", *ab, "--json"],
            ["raycast", *a, *far]]


def test_warm_answers_are_the_commands_own(served, holes_map):
    runtime, path, _, _ = served
    before = status(runtime, path)["answered"]
    queries = [[q[0], str(path), *map(str, q[1:])] for q in _queries(holes_map)]
    # each query answered without the service, all in one process (numba
    # started once, not ten times)
    own = run_commands_in_one_process(queries, None, _env(runtime, REGN_WARM="0"))
    for q, answer in zip(queries, own):
        warm = cli(runtime, *q)
        assert (warm.returncode, warm.stdout, warm.stderr) == answer, q
    # every query went to the service (--radius -1 too: the library's error,
    # raised there and printed here)
    assert status(runtime, path)["answered"] - before == len(queries)


def test_a_served_query_imports_neither_numpy_nor_numba(served, holes_map):
    runtime, path, _, _ = served
    a, b = holes_map.random_points(2, seed=5)
    code = ("import sys; from regn.cli import main; "
            f"code = main(['path', {str(path)!r}, *{[repr(float(v)) for v in (*a, *b)]!r}]); "
            "assert 'numpy' not in sys.modules and 'numba' not in sys.modules; "
            "sys.exit(code)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(runtime), check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("status ok\n")


def test_a_changed_map_is_not_answered_by_its_old_service(served, holes_map, tmp_path):
    runtime, path, _, _ = served
    copy = tmp_path / "copy.rgn"
    copy.write_bytes(path.read_bytes())
    assert status(runtime, copy) is None             # another file: its own key
    before = status(runtime, path)["answered"]
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    try:
        assert status(runtime, path) is None
        a, b = holes_map.random_points(2, seed=6)
        r = cli(runtime, "path", path, *a, *b)
        assert r.returncode == 0 and r.stdout.startswith("status ok")
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert status(runtime, path)["answered"] == before


def test_idle_service_exits_and_removes_its_socket(tmp_path, small_map, short_dir):
    runtime = Path(short_dir)
    path = tmp_path / "small.rgn"
    regn.save(small_map, path)
    started = cli(runtime, "serve", path, "--background", "--idle", 1)
    assert started.returncode == 0 and "warm (pid" in started.stdout
    assert list((runtime / "regn").glob("*.sock"))
    for _ in range(600):
        if not list((runtime / "regn").glob("*.sock")):
            break
        time.sleep(0.1)
    assert not list((runtime / "regn").glob("*.sock"))
    r = cli(runtime, "serve", path, "--stop")
    assert r.returncode == 1 and "no warm service" in r.stdout


def test_bad_map_or_unsafe_directory_is_one_line(tmp_path, short_dir):
    runtime = Path(short_dir)
    junk = tmp_path / "junk.rgn"
    junk.write_bytes(b"REGN" + b"\0" * 60)
    r = cli(runtime, "serve", junk, "--background")
    assert r.returncode == 2 and r.stderr.startswith("regn: serve --background: ")
    assert len(r.stderr.strip().splitlines()) == 1 and "junk.rgn" in r.stderr
    assert not list((runtime / "regn").glob("*.sock"))
    os.chmod(runtime / "regn", 0o777)                # open to others: never used
    r = cli(runtime, "serve", junk, "--background")
    assert r.returncode == 2 and "no private directory" in r.stderr
    r = cli(runtime, "serve", junk, "--background", "--idle", 0)
    assert r.returncode == 2 and "--idle must be more than 0" in r.stderr


def test_a_second_cold_query_starts_the_service_once(tmp_path, monkeypatch, short_dir):
    from regn.cli import warm
    started = []
    monkeypatch.setattr(warm, "_spawn", lambda *a, **k: started.append(a) or
                        types.SimpleNamespace(pid=os.getpid()))
    monkeypatch.setenv("XDG_RUNTIME_DIR", short_dir)
    path = tmp_path / "map.rgn"
    path.write_bytes(b"any file: the service is not started here")
    stem = warm.socket_path(str(path), create=True)[:-len(".sock")]
    for off in ("0", "manual"):                     # never started, nothing noted
        monkeypatch.setenv("REGN_WARM", off)
        assert not warm.after_cold_query(str(path)) and not warm.after_cold_query(str(path))
        assert not os.path.exists(stem + ".asked")
    monkeypatch.delenv("REGN_WARM")
    said = []
    assert not warm.after_cold_query(str(path), say=said.append)      # asked once: noted
    assert os.path.exists(stem + ".asked") and not started and not said
    old = time.time() - warm.AUTO_AFTER - 5                           # a while ago: noted again
    os.utime(stem + ".asked", (old, old))
    assert not warm.after_cold_query(str(path)) and not started
    assert warm.after_cold_query(str(path), say=said.append)          # twice in a row: started
    assert started == [(str(path), stem + ".sock", warm.AUTO_IDLE)]
    assert len(said) == 1 and "REGN_WARM=0" in said[0]
    assert not warm.after_cold_query(str(path)) and not warm.after_cold_query(str(path))
    assert len(started) == 1                        # it is loading: not started again
    old = time.time() - warm.AUTO_GRACE - 5         # it never came up: may start again
    os.utime(stem + ".starting", (old, old))
    assert not warm.after_cold_query(str(path)) and warm.after_cold_query(str(path))
    assert len(started) == 2


def wait_for_arguments(pid, timeout=30.0):
    """Until process ``pid``'s command line is readable: Popen can return
    while the child is still inside execve, its /proc cmdline still empty."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read():
                    return
        except OSError:
            return                  # no /proc: nothing to wait for
        time.sleep(0.01)


def test_a_service_still_loading_is_listed_and_stopped(tmp_path, monkeypatch, short_dir):
    """--list and --stop-all see a service a repeated query started before
    it answers (its marker names its process); a marker whose process is
    no regn serve is left alone."""
    from regn.cli import warm
    monkeypatch.setenv("XDG_RUNTIME_DIR", short_dir)
    path = str(tmp_path / "map.rgn")
    Path(path).write_bytes(b"any file: no service is started here")
    stem = warm.socket_path(path, create=True)[:-len(".sock")]
    loading = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                "regn", "serve"])
    try:
        wait_for_arguments(loading.pid)
        with open(stem + ".starting", "w") as f:
            json.dump({"pid": loading.pid, "file": path}, f)
        assert [(d["pid"], d["file"]) for d in warm.loading()] == [(loading.pid, path)]
        assert [d["pid"] for d in warm.stop_all()] == [loading.pid]
        assert loading.wait(timeout=30) != 0 and not os.path.exists(stem + ".starting")
        with open(stem + ".starting", "w") as f:               # not a service: kept
            json.dump({"pid": os.getpid(), "file": path}, f)
        assert warm.loading() == [] and warm.stop_all() == []
    finally:
        loading.kill()


def test_a_map_queried_twice_is_kept_warm_for_the_next(served):
    runtime, path, q, first = served
    doc = status(runtime, path)
    assert doc is not None and doc["idle_exit"] == 300
    before = doc["answered"]
    third = cli(runtime, *q)
    assert (third.returncode, third.stdout, third.stderr) == first
    assert status(runtime, path)["answered"] == before + 1
    listed = cli(runtime, "serve", "--list", "--json")
    assert [d["file"] for d in json.loads(listed.stdout)] == [str(path)]


def test_list_and_stop_all(served):
    """(Last in the file: it stops the module's service.)"""
    runtime, path, _, _ = served
    stopped = cli(runtime, "serve", "--stop-all")
    assert stopped.returncode == 0 and stopped.stdout.startswith("stopped pid ")
    assert str(path) in stopped.stdout
    assert not list((Path(runtime) / "regn").glob("*.s*"))   # socket and marker gone
    assert cli(runtime, "serve", "--list").stdout == "regn serve: no warm service runs\n"
    r = cli(runtime, "serve")
    assert r.returncode == 2 and r.stderr.startswith("regn: serve: give the FILE")
