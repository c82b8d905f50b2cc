"""verify's kernel-backed checks and the POF0 codec judged by the slow,
obviously-right references of tests/reference.py, on a few hundred corrupted
objects (both byte orders, both POF0 dialects, the byte fuzzer's mutations)
and on random tables."""

import os
import re
import struct
import sys

import numpy as np
import pytest

import regn
import regn.checks._run
from regn.checks import verify
from regn.errors import FormatError
from regn.format import pof0
from regn.format.layout import STRIDES
from conftest import random_map
import reference as ref

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
import mutate  # noqa: E402

DATA = 0x10
SPECIAL = [struct.pack(">f", x) for x in (np.nan, np.inf, -np.inf, 1e30, -0.0, 0.0, 1e-30)]

# how a failing detail names a record of each check (tests/reference.py's numbering)
NAMED = {"face_plane_through_tet": lambda i: f"tet {i // 4} slot {i % 4} ",
         "portal_cost_rule": lambda i: f"tet {i // 6} pair {ref.PAIRS[i % 6]}",
         **{name: lambda t: f"tet {t}" for name in (
             "tet_volume_nonzero", "tet_orientation_positive", "tet_centre_radius")},
         **{name: lambda f: f"face {f}" for name in (
             "face_normals_unit", "face_point_on_plane", "face_w_one", "face_own_index",
             "face_tet_a_slot", "faces_listed_once_or_twice", "face_tet_b_slot",
             "face_zero_field", "face_normal_out_of_a")}}


def corruptions(b, rng, n, order):
    """``b`` with 1-3 data words changed (special and perturbed floats, small
    integer steps, random bytes), then with two records of a section swapped."""
    parts = regn.loads(b).parts
    size, offs, counts = parts.frame.data_size, parts.section_offsets, parts.counts
    f32, u32 = order + "f", order + "I"
    for _ in range(n):
        c = bytearray(b)
        for _ in range(int(rng.integers(1, 4))):
            at = DATA + 4 * int(rng.integers(0x80 // 4, size // 4))
            r = rng.random()
            if r < 0.3:
                word = SPECIAL[rng.integers(len(SPECIAL))][::1 if order == ">" else -1]
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
    for k in (0, 1, 2, 5):
        for _ in range(3):
            p, q = (int(x) for x in rng.integers(0, counts[k], 2))
            s = STRIDES[k]
            c = bytearray(b)
            a0, b0 = DATA + offs[k] + p * s, DATA + offs[k] + q * s
            c[a0:a0 + s], c[b0:b0 + s] = bytes(c[b0:b0 + s]), bytes(c[a0:a0 + s])
            yield bytes(c)


def cases():
    rng = np.random.default_rng(2024)
    out = []
    # maps of 132 and 79 tetrahedra: the pure-Python references take most of
    # the time, and the checks fail as often and as variously as on maps twice
    # the size (33 kinds of failure among ~300 judged objects)
    for seed, n_points, dims in ((5, 25, (6, 5, 4)), (8, 15, (3, 4, 5))):
        m = random_map(n_points, seed=seed, hole_fraction=0.15, dims=dims)
        for order in (">", "<"):
            for dialect in (3, 4):
                b = m.dumps(byte_order=order, pof0_dialect=dialect)
                out.append(b)
                out.extend(corruptions(b, rng, 30 if seed == 5 else 12, order))
    bases = mutate.make_bases()
    out.extend(mutate.input_for(bases, 99, i)[0] for i in range(250))
    return out


def judge(report, obj):
    """Every kernel-backed check of ``report`` against the references (the
    grid rule's only on objects whose vertices lie in the box: on others the
    rule's exact test is ill-conditioned)."""
    want = {**ref.face_checks(obj), **ref.tet_checks(obj)}
    for name, (bad, total) in want.items():
        c = report[name]
        assert (c.passed, c.total) == (total - len(bad), total), (name, c, bad[:5])
        if bad:
            assert c.detail.startswith(f"{len(bad)} "), (name, c.detail)
            first = re.escape(NAMED[name](bad[0]))
            assert re.search(f": {first}(?!\\d)", c.detail), (name, c.detail, bad[:5])
    if report["vertices_in_bbox"].status != "pass":
        return
    for name, (passed, total) in ref.grid_checks(obj, ref.membership(obj)).items():
        c = report[name]
        assert (c.passed, c.total) == (passed, total), (name, c, passed, total)


def test_checks_match_the_reference_on_corrupted_objects(monkeypatch):
    judged = 0
    for i, data in enumerate(cases()):
        # every third object on background threads, as big maps run
        monkeypatch.setattr(regn.checks._run, "THREADS_MIN_TETS", 0 if i % 3 == 0 else 2000)
        try:
            report = verify(data, strict=True)
        except FormatError:
            continue
        judge(report, ref.Obj(data))
        judged += 1
    assert judged > 280


def test_pof0_codec_matches_the_reference_on_random_tables():
    """decode / encode against the plain walker and packer, on canonical
    tables and on tables with bytes changed, added or cut."""
    rng = np.random.default_rng(7)

    def reference(table, dialect, data_words):
        try:
            entries, end = ref.pof0_walk(table, dialect)
        except IndexError as e:
            return ("overrun", e.args[0])
        words = list(np.cumsum([d for _, _, d in entries]))
        deltas = [d for _, _, d in entries]
        if deltas and deltas[0] == 0:
            return ("zero", 0)
        if 0 in deltas[1:]:
            return ("zero", entries[deltas.index(0, 1)][0])
        outside = [k for k, w in enumerate(words) if w >= data_words]
        if outside:
            return ("outside", entries[outside[0]][0])
        canonical = (all(n == ref.shortest_length(d, dialect) for _, n, d in entries)
                     and len(table) == -(-end // 4) * 4 and not any(table[end:]))
        return (words, canonical, sum(n > 2 for _, n, _ in entries), end)

    def regn_outcome(table, dialect, data_words):
        try:
            t = pof0.decode(table, dialect, data_words=data_words)
        except FormatError as e:
            kind = ("overrun" if "needs" in str(e) else "outside" if "outside" in str(e)
                    else "zero")
            return (kind, e.offset)
        return (t.words.tolist(), t.canonical, t.long_entries, t.end)

    for _ in range(1500):
        dialect = int(rng.choice([3, 4]))
        top = int(rng.choice([100, 10 ** 4, 10 ** 6]))
        words = np.unique(rng.integers(1, top, int(rng.integers(0, 40)))).tolist()
        table = pof0.encode(words, dialect)
        assert table == ref.pof0_pack(words, dialect)
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
            assert regn_outcome(bytes(t), d, data_words) == reference(bytes(t), d,
                                                                      data_words)


@pytest.mark.parametrize("kind", [1, 2, 3])
def test_pof0_walker_on_long_runs_of_one_kind(kind):
    """Tables of thousands of entries of one length (continuation bytes
    random): the vectorised walker follows the chain as the plain one does."""
    rng = np.random.default_rng(kind)
    for d in (3, 4):
        length = (1, 2, d)[kind - 1]
        for n in (1, 2, 3, 5000, 5001):
            raw = rng.integers(0, 256, n)
            table = bytes(int(kind << 6 | x & 0x3F) if i % length == 0 else int(x)
                          for i, x in enumerate(raw))
            try:
                entries, end = ref.pof0_walk(table, d)
            except IndexError:
                with pytest.raises(FormatError, match="needs"):
                    pof0.decode(table, d)
                continue
            starts, deltas, got_end = pof0._walk(np.frombuffer(table, np.uint8), d)[:3]
            assert starts.tolist() == [s for s, _, _ in entries]
            assert deltas.tolist() == [x for _, _, x in entries] and got_end == end
