"""The compiled verify path against its numpy reference, on many corrupted
objects: every report (to_dict, first difference, POF0 note) or every
FormatError must be the same with the numba kernels and without them
(``regn.checks.USE_NUMBA = False`` runs the numpy implementations, which
are the reference). Also: the compiled POF0 walk and packer against the
vectorised decode/encode, and the CLI's light commands not importing numba."""

import os
import struct
import subprocess
import sys
import warnings

import numpy as np
import pytest

import regn
import regn.checks
from regn.checks import verify
from regn.errors import FormatError
from regn.format import pof0
from regn.format.layout import STRIDES
from conftest import random_map

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
import mutate  # noqa: E402

DATA = 0x10
SPECIAL = [struct.pack(">f", x) for x in (np.nan, np.inf, -np.inf, 1e30, -0.0, 0.0,
                                          1e-30)]


def _outcome(data, use_numba):
    old = regn.checks.USE_NUMBA
    regn.checks.USE_NUMBA = use_numba
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = verify(data, strict=True)
        return ("report", r.to_dict(), r.first_difference, r.pof0_note)
    except FormatError as e:
        return ("error", str(e), e.offset)
    finally:
        regn.checks.USE_NUMBA = old


def _variants(b, rng, n, order=">"):
    """Corruptions of ``b``: special and perturbed floats, small index changes,
    random words, swapped records."""
    parts = regn.loads(b).parts
    size = parts.frame.data_size
    offs, counts = parts.section_offsets, parts.counts
    f32, u32 = order + "f", order + "I"
    for _ in range(n):
        c = bytearray(b)
        for _ in range(int(rng.integers(1, 4))):
            at = DATA + 4 * int(rng.integers(0x80 // 4, size // 4))
            r = rng.random()
            if r < 0.3:
                word = SPECIAL[rng.integers(len(SPECIAL))]
                word = word if order == ">" else word[::-1]
            elif r < 0.55:
                v = struct.unpack(f32, c[at:at + 4])[0]
                v = v * (1 + rng.normal() * 1e-3) if np.isfinite(v) else v
                word = struct.pack(f32, np.float32(v))
            elif r < 0.8:
                v = struct.unpack(u32, c[at:at + 4])[0]
                word = struct.pack(u32, (v + int(rng.integers(-3, 4))) & 0xFFFFFFFF)
            else:
                word = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
            c[at:at + 4] = word
        yield bytes(c)
    for k in (0, 1, 2, 5):            # two records of a section swapped
        for _ in range(3):
            p, q = (int(x) for x in rng.integers(0, counts[k], 2))
            s = STRIDES[k]
            c = bytearray(b)
            a0, b0 = DATA + offs[k] + p * s, DATA + offs[k] + q * s
            ra, rb = bytes(c[a0:a0 + s]), bytes(c[b0:b0 + s])
            c[a0:a0 + s], c[b0:b0 + s] = rb, ra
            yield bytes(c)


def test_compiled_verify_matches_numpy_on_corruptions(monkeypatch):
    """With the kernels on background threads (forced on these small maps)
    against numpy (the test of test_verify.py covers them inline)."""
    pytest.importorskip("numba")
    import regn.checks
    monkeypatch.setattr(regn.checks, "THREADS_MIN_TETS", 0)
    rng = np.random.default_rng(2024)
    m = random_map(100, seed=5, hole_fraction=0.15, dims=(6, 5, 4))
    cases = []
    for order in (">", "<"):
        b = m.dumps(byte_order=order)
        cases.append(b)
        cases.extend(_variants(b, rng, 40, order))
    cases.append(m.dumps(pof0_dialect=4))
    bases = mutate.make_bases()
    cases.extend(mutate.input_for(bases, 99, i)[0] for i in range(120))
    reports = 0
    for data in cases:
        fast = _outcome(data, True)
        slow = _outcome(data, False)
        assert fast == slow
        reports += fast[0] == "report"
    assert reports > 100
    assert len(cases) > 200


def test_pof0_compiled_walk_and_pack_match_numpy():
    pytest.importorskip("numba")
    from regn.checks._kernels import pof0_pack, pof0_walk
    rng = np.random.default_rng(7)

    def outcome(table, dialect, data_words, walk):
        try:
            t = pof0.decode(table, dialect, data_words=data_words, walk=walk)
            return (t.words.tolist(), t.canonical, t.long_entries, t.end, t.notes)
        except FormatError as e:
            return (str(e), e.offset)

    for _ in range(1500):
        dialect = int(rng.choice([3, 4]))
        top = int(rng.choice([100, 10 ** 4, 10 ** 6]))
        words = np.unique(rng.integers(1, top, int(rng.integers(0, 40))))
        table = pof0.encode(words, dialect)
        assert pof0.encode(words, dialect, pack=pof0_pack) == table
        t = bytearray(table)
        for _ in range(int(rng.integers(0, 4))):
            r = rng.random()
            if t and r < 0.6:
                t[int(rng.integers(len(t)))] = int(rng.integers(256))
            elif r < 0.8:
                t += rng.integers(0, 256, int(rng.integers(1, 5))).astype(np.uint8).tobytes()
            elif t:
                del t[int(rng.integers(len(t))):]
        data_words = int(rng.choice([10 ** 3, 10 ** 7]))
        for d in (3, 4):
            assert (outcome(bytes(t), d, data_words, pof0_walk)
                    == outcome(bytes(t), d, data_words, None))


def test_light_cli_commands_do_not_import_numba(tmp_path):
    """``regn info`` / ``regn --help`` stay fast: no numba import."""
    path = tmp_path / "m.rgn"
    regn.save(random_map(20, seed=1), path)
    code = ("import sys\n"
            "from regn.cli import main\n"
            "import regn\n"
            f"regn.load({str(path)!r}).vertices\n"
            f"main(['info', {str(path)!r}])\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "assert 'numba' not in sys.modules, 'numba imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
