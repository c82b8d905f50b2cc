"""Structure-aware mutations of REGN objects built by the project.

Why a seeded numpy Generator and not only a coverage-guided fuzzer: every
input is a pure function of (seed, index), so a finding is reproduced by two
integers with no corpus, no build step and no native extension; and the
mutator knows the object's layout (chunk header, data header counts and
pointers, each section, the face sentinels, the POF0 table and its size), so
it spends its budget on bytes that reach the deeper checks instead of
rediscovering the chunk tag.
"""

from __future__ import annotations

import struct

import numpy as np
from scipy.spatial import Delaunay

import regn
from regn.format import pof0
from regn.format.layout import (CHUNK_HEADER_SIZE, F32_ONE_BITS, FACE_SENTINELS,
                                HEADER_SIZE, SECTION_NAMES, STRIDES)
from regn.format.reader import expected_pointer_words

H = 50_000.0
SPECIAL_WORDS = (0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFF, 0x10000,
                 0x7FC00000, 0x7F800000, 0xFF800000, 0x00000080, F32_ONE_BITS)


def _map(n_points, seed, hole_fraction=0.15, dims=(4, 4, 4), **kw):
    rng = np.random.default_rng(seed)
    corners = np.array([[x, y, z] for z in (-H, H) for y in (-H, H) for x in (-H, H)])
    pts = np.concatenate([corners, rng.uniform(-H, H, (n_points, 3))])
    tets = Delaunay(pts).simplices
    a, b, c, d = (pts[tets[:, k]] for k in range(4))
    vol = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a))
    keep = (vol > 1e-6 * vol.max()) & (rng.random(len(tets)) >= hole_fraction)
    tets = tets[keep]
    used = np.unique(tets)
    remap = np.full(len(pts), -1)
    remap[used] = np.arange(len(used))
    return regn.build(pts[used], remap[tets], bbox=(-H * np.ones(3), H * np.ones(3)),
                      dims=dims, **kw)


class Base:
    """One valid object and the byte spans of its regions."""

    def __init__(self, data: bytes):
        self.data = bytes(data)
        mesh = regn.loads(self.data)
        parts = mesh.parts
        fr = parts.frame
        self.order = fr.byte_order
        self.dialect = mesh.pof0_dialect
        d0 = fr.data_start
        self.d0 = d0
        counts = parts.counts
        offs = parts.section_offsets
        self.offs = offs
        self.counts = counts
        r = {"chunk_header": (0, CHUNK_HEADER_SIZE),
             "header": (d0, d0 + HEADER_SIZE),
             "header_counts": (d0 + 0x50, d0 + 0x5C),
             "header_ptrs": (d0 + 0x60, d0 + 0x78),
             "pof0_header": (fr.pof0_start, fr.pof0_start + CHUNK_HEADER_SIZE),
             "pof0_size": (fr.pof0_start + 4, fr.pof0_start + 8),
             "pof0_table": (fr.table_start, fr.table_start + fr.pof0_size)}
        for k, name in enumerate(SECTION_NAMES):
            start = d0 + offs[k]
            end = start + counts[k] * STRIDES[k]
            if end > start:
                r[name] = (start, end)
            if k == 2:
                r["face_sentinels"] = (end, end + FACE_SENTINELS * STRIDES[2])
        self.regions = r
        self.names = sorted(r)
        self.words = [int(w) for w in expected_pointer_words(
            offs, np.asarray(parts.cell_item) >= 0, counts[4], counts[5])]


def make_bases(seed=12345):
    """A few small maps in the three wire forms (>/3, </3, >/4)."""
    out = []
    for i, (n, dims) in enumerate(((4, (2, 2, 2)), (10, (3, 2, 2)), (20, (3, 3, 3)))):
        m = _map(n, seed + i, dims=dims)
        out.append(Base(m.dumps()))
        out.append(Base(m.dumps(byte_order="<")))
        out.append(Base(m.dumps(pof0_dialect=4)))
    return out


def _u32(order):
    return ">I" if order == ">" else "<I"


def _fix_pof0(buf: bytearray, base: Base, words, dialect):
    """Replace the POF0 table with a fresh encoding of ``words`` and fix its
    size field; the rest of the object is left as it is."""
    fr0 = base.regions["pof0_header"][0]
    if len(buf) < fr0 + CHUNK_HEADER_SIZE:
        return buf
    try:
        table = pof0.encode(sorted(set(int(w) for w in words)), dialect)
    except ValueError:
        return buf
    out = bytearray(buf[:fr0 + CHUNK_HEADER_SIZE]) + table
    struct.pack_into(_u32(base.order), out, fr0 + 4, len(table))
    return out


def mutate(bases, rng: np.random.Generator):
    """-> (bytes, description) of one mutated input."""
    base = bases[int(rng.integers(len(bases)))]
    buf = bytearray(base.data)
    n_ops = int(rng.choice([1, 1, 1, 2, 3]))
    desc = []
    for _ in range(n_ops):
        op = str(rng.choice(["flip", "zero", "ff", "rand", "word", "word",
                             "splice", "truncate", "extend", "pointer",
                             "pointer", "count"]))
        region = str(rng.choice(base.names))
        lo, hi = base.regions[region]
        hi = min(hi, len(buf))
        if hi <= lo:
            lo, hi = 0, len(buf)
        if op == "flip":
            pos = int(rng.integers(lo, hi))
            buf[pos] ^= 1 << int(rng.integers(8))
            desc.append(f"flip {region}@{pos}")
        elif op in ("zero", "ff", "rand"):
            pos = int(rng.integers(lo, hi))
            ln = int(min(hi - pos, rng.integers(1, 17)))
            fill = (bytes(ln) if op == "zero" else b"\xff" * ln if op == "ff"
                    else rng.bytes(ln))
            buf[pos:pos + ln] = fill
            desc.append(f"{op} {region}@{pos}+{ln}")
        elif op == "word":
            pos = lo + 4 * int(rng.integers(max(1, (hi - lo) // 4)))
            if pos + 4 > len(buf):
                continue
            w = (int(rng.choice(SPECIAL_WORDS)) if rng.random() < 0.6
                 else int(rng.integers(0, 1 << 32)))
            struct.pack_into(_u32(base.order), buf, pos, w)
            desc.append(f"word {region}@{pos}={w:#x}")
        elif op == "count":
            k = int(rng.integers(6))
            pos = base.d0 + 0x50 + 2 * k
            if pos + 2 > len(buf):
                continue
            v = int(rng.choice([0, 1, 0xFFFF, base.counts[k] + 1,
                                max(0, base.counts[k] - 1), int(rng.integers(0, 1 << 16))]))
            struct.pack_into(">H" if base.order == ">" else "<H", buf, pos, v)
            desc.append(f"count {k}={v}")
        elif op == "splice":
            other = bases[int(rng.integers(len(bases)))]
            name = str(rng.choice([n for n in SECTION_NAMES if n in other.regions]))
            a, b = other.regions[name]
            if name in base.regions:
                c, d = base.regions[name]
                src = other.data[a:b]
                # same length keeps the frame; otherwise replace the span
                if rng.random() < 0.5:
                    src = (src * (1 + (d - c) // max(1, len(src))))[:d - c]
                buf[c:d] = src
                desc.append(f"splice {name} len {len(src)} into {d - c}")
        elif op == "truncate":
            cut = int(rng.integers(0, len(buf)))
            del buf[cut:]
            desc.append(f"truncate {cut}")
        elif op == "extend":
            ln = int(rng.integers(1, 64))
            buf += bytes(ln) if rng.random() < 0.5 else rng.bytes(ln)
            desc.append(f"extend {ln}")
        elif op == "pointer":
            # retarget one pointer word, keep POF0 consistent with it
            if not base.words:
                continue
            w = int(rng.choice(base.words))
            pos = base.d0 + 4 * w   # POF0 lists word indices
            if pos + 4 > len(buf):
                continue
            old = struct.unpack_from(_u32(base.order), buf, pos)[0]
            choice = rng.random()
            if choice < 0.3:
                new = old + int(rng.choice([-96, -48, -32, -4, -1, 1, 2, 4, 32, 48, 96]))
            elif choice < 0.5:
                new = int(rng.choice([0, 0x80, 0xFFFFFFFF, len(buf), 0x7FFFFFFF]))
            else:
                new = int(rng.integers(0, len(buf) + 256))
            new &= 0xFFFFFFFF
            struct.pack_into(_u32(base.order), buf, pos, new)
            words = list(base.words)
            r = rng.random()
            if r < 0.2 and new == 0:
                words.remove(w)          # a null cell pointer is not listed
            elif r < 0.3:
                words.append(int(rng.integers(1, (base.regions["pof0_header"][0] - base.d0) // 4)))
            buf = _fix_pof0(buf, base, [x for x in words if x > 0], base.dialect)
            desc.append(f"pointer @{w}: {old:#x}->{new:#x}")
    return bytes(buf), "; ".join(desc) or "identity"


def input_for(bases, seed: int, index: int):
    rng = np.random.default_rng([seed, index])
    return mutate(bases, rng)
