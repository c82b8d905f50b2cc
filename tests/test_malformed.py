"""Malformed objects: each gets the library's own error naming the offset, and
the CLI prints one line and exits non-zero. No count may drive an allocation."""

import struct
import tracemalloc

import numpy as np
import pytest

import regn
from regn.cli import main
from regn.format import pof0

D0 = 16  # object offset of the data area


@pytest.fixture(scope="module")
def good(small_map):
    return small_map.dumps()


def _u32(b, at, value):
    b[at:at + 4] = struct.pack(">I", value)


def _data_size(b):
    return struct.unpack(">I", bytes(b[4:8]))[0]


def _ptr(b, k):
    return struct.unpack(">I", bytes(b[D0 + 0x60 + 4 * k:D0 + 0x64 + 4 * k]))[0]


def _replace_pof0(b, words):
    size = _data_size(b)
    table = pof0.encode(words)
    head = bytearray(b[:D0 + size + 16])
    _u32(head, D0 + size + 4, len(table))
    return bytes(head) + table


def corruptions(good):
    b = bytearray(good)
    size = _data_size(b)
    cases = {}
    cases["empty"] = b""
    cases["short"] = bytes(b[:10])
    cases["wrong tag"] = b"NGER" + bytes(b[4:])
    cases["size past end"] = bytes(b[:4]) + struct.pack(">I", len(b) * 4) + bytes(b[8:])
    cases["truncated in POF0"] = bytes(b[:D0 + size + 20])
    cases["truncated in data"] = bytes(b[:D0 + size // 2])
    no_pof = bytearray(b)
    no_pof[D0 + size:D0 + size + 4] = b"XXXX"
    cases["POF0 missing"] = bytes(no_pof)
    long_pof = bytearray(b)
    _u32(long_pof, D0 + size + 4, 1 << 30)
    cases["POF0 past its chunk"] = bytes(long_pof)
    cases["POF0 word outside data"] = _replace_pof0(b, [24, 25, size // 4 + 5])
    twice = bytearray(b[:D0 + size + 16]) + bytes([0x58, 0x40, 0, 0])
    _u32(twice, D0 + size + 4, 4)
    cases["POF0 word twice"] = bytes(twice)
    for k, name in enumerate(("vertices", "tets", "faces", "cells", "items", "refs")):
        c = bytearray(b)
        _u32(c, D0 + 0x60 + 4 * k, size + 0x1000)
        cases[f"section {name} pointer out of range"] = bytes(c)
    c = bytearray(b)
    c[D0 + 0x52:D0 + 0x54] = struct.pack(">H", 0xFFFF)          # 65 535 tetrahedra
    cases["count past span"] = bytes(c)
    c = bytearray(b)
    _u32(c, D0 + 0x40, 11)                                        # nx != cells
    cases["dims vs cell count"] = bytes(c)
    c = bytearray(b)
    t0 = D0 + _ptr(b, 1)
    c[t0 + 0x10:t0 + 0x12] = struct.pack(">H", 60000)             # vertex index
    cases["vertex index out of range"] = bytes(c)
    c = bytearray(b)
    c[t0 + 0x18:t0 + 0x1A] = struct.pack(">H", 60000)             # face index
    cases["face index out of range"] = bytes(c)
    c = bytearray(b)
    f0 = D0 + _ptr(b, 2)
    _u32(c, f0 + 0x24, 50000)
    cases["face tet out of range"] = bytes(c)
    c = bytearray(b)
    v0 = D0 + _ptr(b, 0)
    c[v0:v0 + 4] = struct.pack(">f", float("nan"))
    cases["NaN vertex"] = bytes(c)
    c = bytearray(b)
    c[D0:D0 + 4] = struct.pack(">f", float("inf"))
    cases["inf bbox"] = bytes(c)
    c = bytearray(b)
    r0 = D0 + _ptr(b, 5)
    _u32(c, r0, size + 96)
    cases["ref outside tets"] = bytes(c)
    c = bytearray(b)
    c3 = D0 + _ptr(b, 3)
    _u32(c, c3 + 4, 0x7FFFFFF0)
    cases["cell pointer outside items"] = bytes(c)
    c = bytearray(b)
    i0 = D0 + _ptr(b, 4)
    _u32(c, i0 + 0x10, 0xFFFFFF)
    cases["item n past refs"] = bytes(c)
    ff = bytearray(b)
    ff[D0:D0 + size] = b"\xff" * size
    cases["0xFF flood"] = bytes(ff)
    rng = np.random.default_rng(3)
    cases["random bytes"] = rng.integers(0, 256, len(b), dtype=np.uint8).tobytes()
    cases["random after tag"] = b"REGN" + rng.integers(0, 256, 400, dtype=np.uint8).tobytes()
    # a tiny object claiming 65 535 records in every section
    tiny = bytearray(16 + 0x80 + 16 + 4)
    tiny[0:4] = b"REGN"
    _u32(tiny, 4, 0x80)
    tiny[D0 + 0x50:D0 + 0x5C] = b"\xff\xff" * 6
    for k in range(6):
        _u32(tiny, D0 + 0x60 + 4 * k, 0x80)
    tiny[D0 + 0x80:D0 + 0x84] = b"POF0"
    _u32(tiny, D0 + 0x84, 4)
    cases["tiny file claiming 65535 records"] = bytes(tiny)
    return cases


def _cases():
    from conftest import random_map
    return corruptions(random_map(300, seed=1).dumps())


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_raises_format_error(name):
    data = CASES[name]
    tracemalloc.start()
    with pytest.raises(regn.FormatError) as info:
        # the POF0 table is decoded on first use (loading stays cheap)
        m = regn.loads(data, path="bad.rgn")
        m.pof0_dialect
        m.vertices
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    msg = str(info.value)
    assert msg.startswith("bad.rgn")
    if data:
        assert "offset 0x" in msg
    # nothing read from the file may make the reader allocate past the file's size
    assert peak < 10 * len(data) + 2_000_000


@pytest.mark.parametrize("name", ["empty", "wrong tag", "POF0 missing", "count past span",
                                  "NaN vertex", "random bytes"])
def test_cli_prints_one_line(tmp_path, capsys, name):
    path = tmp_path / "bad.rgn"
    path.write_bytes(CASES[name])
    for cmd in (["info"], ["dump", "--json"]):
        assert main(cmd + [str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"regn: {path}")
        assert "Traceback" not in err


def test_truncated_everywhere_never_crashes(good):
    """Every prefix of a valid object is refused cleanly (or, past the POF0
    body, read with a shorter trailer)."""
    for cut in range(0, len(good), max(1, len(good) // 400)):
        try:
            regn.loads(good[:cut])
        except regn.FormatError:
            pass


def test_cli_missing_file(capsys):
    assert main(["info", "/nonexistent/x.rgn"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: /nonexistent/x.rgn") and err.count("\n") == 1


def test_rewrite_refuses_to_overwrite_input(tmp_path, good, capsys):
    src = tmp_path / "a.rgn"
    src.write_bytes(good)
    assert main(["rewrite", str(src), str(src)]) == 2
    assert "--in-place" in capsys.readouterr().err
    assert src.read_bytes() == good
    assert main(["rewrite", str(src), str(src), "--in-place"]) == 0
    assert src.read_bytes() == good
    out = tmp_path / "b.rgn"
    assert main(["rewrite", str(src), str(out)]) == 0 and out.read_bytes() == good
    assert main(["rewrite", str(src), str(out)]) == 2   # exists, no --force
    assert main(["rewrite", str(src), str(out), "--byte-order", "little", "--force"]) == 0
    assert regn.load(out).byte_order == "<"
