"""Memory bounded by the input (issue 21): streams are read a block at a
time, a map file is read only as far as its headers say, scan keeps its
candidate list to a window. Peak memory is compared between a small and a
ten times larger input in child processes (no timing is asserted)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import regn
from regn.cli import main

from conftest import random_map

#: Ten times the input may cost this much more peak memory. Read whole (one
#: block, one window), the larger inputs below cost 60..90 MB more than the
#: smaller; in blocks, within a few hundred KB.
SLACK_MB = 20
#: The children read points in blocks this small (regn.inputs.points), so
#: inputs a tenth of a real one's still span many blocks: the smaller
#: .npy 5 blocks, the larger 49; the smaller text 22, the larger 214.
BLOCKS = {"CHUNK_ROWS": 2048, "BLOCK_BYTES": 1 << 16}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded")
    rgn = d / "map.rgn"
    regn.save(random_map(60, seed=8, dims=(3, 3, 3)), rgn)
    rng = np.random.default_rng(0)
    small = rng.uniform(-6e4, 6e4, (50_000, 3))
    text = "".join(f"{x:.2f} {y:.2f} {z:.2f}\n" for x, y, z in small.tolist())
    (d / "p50k.txt").write_text(text)
    (d / "p500k.txt").write_text(text * 10)
    np.save(d / "p10k.npy", small[:10_000])         # JSON output: smaller, for time
    np.save(d / "p100k.npy", np.tile(small[:10_000], (10, 1)))
    return d


def peak_mb(argv, stdin=None, blocks=None):
    """(exit code, peak resident MB) of ``regn ARGV`` in a child process
    (reading points in ``blocks``: regn.inputs.points' constants)."""
    code = ("import atexit, sys\n"
            "def peak():\n"
            "    with open('/proc/self/status') as fh:\n"
            "        kb = next(int(l.split()[1]) for l in fh if l.startswith('VmHWM:'))\n"
            "    sys.stderr.write(f'\\nPEAK {kb}\\n')\n"
            "atexit.register(peak)\n"
            + (f"import regn.inputs.points as points\npoints.__dict__.update({blocks!r})\n"
               if blocks else "")
            + "from regn.cli import main\n"
            f"sys.exit(main({argv!r}))\n")
    with open(stdin or os.devnull, "rb") as fin:
        r = subprocess.run([sys.executable, "-c", code], stdin=fin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    kb = int(r.stderr.decode().rsplit("PEAK ", 1)[1])
    return r.returncode, kb / 1024


@pytest.mark.parametrize("command,small,big", [
    (["locate", "{d}/map.rgn"], "{d}/p50k.txt", "{d}/p500k.txt"),
    (["nearest", "{d}/map.rgn", "--json", "--points"], "{d}/p10k.npy", "{d}/p100k.npy"),
])
def test_points_are_answered_in_blocks(files, command, small, big):
    argv = [a.format(d=files) for a in command]
    measured = []
    for source in (small, big):
        source = source.format(d=files)
        if source.endswith(".txt"):
            measured.append(peak_mb(argv, stdin=source, blocks=BLOCKS))
        else:
            measured.append(peak_mb(argv + [source], blocks=BLOCKS))
    (code_s, mb_s), (code_b, mb_b) = measured
    assert code_s == code_b == 0
    assert mb_b - mb_s < SLACK_MB, measured


def test_scan_of_repeated_pof0_keeps_a_window(tmp_path):
    """Every byte of b'POF0' * N starts a tag: before, every position became
    a candidate at once (3 GB for 256 MB)."""
    measured = []
    for mb in (8, 80):          # without the window, 80 MB cost 72 MB more than 8
        blob = tmp_path / f"pof0-{mb}.bin"
        with open(blob, "wb") as fh:
            for _ in range(mb):
                fh.write(b"POF0" * (1 << 18))
        measured.append(peak_mb(["scan", str(blob), "--json"]))
        blob.unlink()
    (code_s, mb_s), (code_b, mb_b) = measured
    assert code_s == code_b == 0
    assert mb_b - mb_s < SLACK_MB, measured


def test_repeated_pof0_and_real_objects(tmp_path, capsys):
    """The streamed search still finds objects among hostile bytes, on both
    sides of window edges."""
    import regn.scan.finder as finder
    obj = random_map(20, seed=9, dims=(2, 2, 2)).dumps()
    blob = b"POF0" * 3000 + obj + b"POF0" * 5001 + obj + b"xPOF"
    old = finder.WINDOW
    try:
        finder.WINDOW = 4096
        found = finder.scan(blob, validate=False)
    finally:
        finder.WINDOW = old
    assert [f.offset for f in found] == [12000, 12000 + len(obj) + 20004]


def _info(path, stdin=None):
    with open(stdin or os.devnull, "rb") as fin:
        return subprocess.run([sys.executable, "-c", "import sys; from regn.cli import main; "
                               f"sys.exit(main(['info', {path!r}]))"],
                              stdin=fin, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_info_of_an_endless_device_stops(device):
    r = _info(device)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"regn: {device}: offset 0x0: tag is")


def test_a_map_through_a_pipe(tmp_path):
    rgn = tmp_path / "m.rgn"
    regn.save(random_map(20, seed=9, dims=(2, 2, 2)), rgn)
    r = _info("/dev/stdin", stdin=rgn)
    assert r.returncode == 0 and "REGN" in r.stdout
    # the same map followed by endless zeros: read up to the bound, then refused
    r = subprocess.run(f"cat {rgn} /dev/zero | {sys.executable} -c \"import sys; "
                       "from regn.cli import main; sys.exit(main(['info', '/dev/stdin']))\"",
                       shell=True, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "bytes after the POF0 table" in r.stderr


def test_scan_and_chunk_read_a_pipe(tmp_path, capsys, monkeypatch):
    import regn.cli.scan_cmd as scan_cmd
    obj = random_map(20, seed=9, dims=(2, 2, 2)).dumps()
    for argv, needle in ((["scan", "--json"], '"tag": "REGN"'), (["chunk"], "REGN at 0x0")):
        read, write = os.pipe()
        os.write(write, b"junk" + obj if argv[0] == "scan" else obj)
        os.close(write)
        try:
            path = f"/dev/fd/{read}"
            assert main([argv[0], path, *argv[1:]]) == 0
        finally:
            os.close(read)
        assert needle in capsys.readouterr().out
    monkeypatch.setattr(scan_cmd, "STREAM_LIMIT", 1000)
    read, write = os.pipe()
    os.write(write, obj)
    os.close(write)
    try:
        assert main(["scan", f"/dev/fd/{read}"]) == 2
    finally:
        os.close(read)
    assert "longer than 1000 bytes" in capsys.readouterr().err


def test_pof0_decode_walks_no_more_than_the_data_area():
    """A 20 MB table of 0x41 bytes (20 M one-byte entries) against an 8 KB
    data area: decoding stops where the data area's words run out."""
    import tracemalloc
    from regn.errors import FormatError
    from regn.format import pof0
    table = b"\x41" * (20 << 20)
    tracemalloc.start()
    with pytest.raises(FormatError, match="lists word 2048 .* outside the 0x2000-byte"):
        pof0.decode(table, 3, data_words=2048)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 << 20, peak


@pytest.mark.parametrize("dialect", [3, 4])
def test_pof0_bound_changes_no_verdict(dialect):
    """On random tables (valid prefixes with junk after, runs of one kind of
    entry, random bytes), the bounded decode accepts exactly what a walk
    of the whole table accepts, with the same words."""
    from regn.errors import FormatError
    from regn.format import pof0
    rng = np.random.default_rng(dialect)
    for i in range(3000):
        dw = int(rng.integers(0, 40))
        kind = i % 3
        if kind == 0:
            words = np.unique(rng.integers(1, max(dw, 2) + 5, int(rng.integers(0, 12))))
            table = pof0.encode(words, dialect) + rng.bytes(int(rng.integers(0, 9)))
        elif kind == 1:
            table = bytes([int(rng.choice([0x41, 0x80, 0xC0, 0x00]))]) * int(rng.integers(1, 200))
        else:
            table = rng.bytes(int(rng.integers(0, 200)))
        outcomes = []
        for whole in (False, True):
            try:
                # data_words=None walks everything; the range check is then ours
                t = pof0.decode(table, dialect, data_words=None if whole else dw)
                if whole and len(t.words) and t.words[-1] >= dw:
                    raise FormatError("outside")
                outcomes.append((t.words.tolist(), t.canonical, t.end))
            except FormatError:
                outcomes.append("error")
        assert outcomes[0] == outcomes[1], (i, table, dw)
