"""Infer the record layout of any POF0 chunk from its pointers and its words.

Given a data area and the word indices its POF0 table lists:

1. **Pointer map**: every listed word, where it is and where it points
   (data-relative; null pointers are kept but point nowhere).
2. **Regions**: region starts are the data start plus the targets of the
   pointers that lie in front of every target (a header's pointer table);
   when there is no such table, every target whose gap from the previous
   target breaks the common spacing starts a region. A region runs to the
   next start or to the data end.
3. **Stride** per region, from three kinds of evidence: the GCD of the target
   spacing (targets land on record boundaries), the GCD of the spacing of
   the pointers located in the region (a pointer field recurs once per
   record), and the periodicity of word classes (autocorrelation). The
   candidate is then checked against the integers in the leading region (a
   header's record counts): the smallest multiple of the base stride whose
   record count — with at most 16 bytes of alignment padding or two trailing
   sentinel records — is one of those integers wins.
4. **Census** per word of the record: share of zeros, of integer-like words
   (denormal as a float), of finite floats, of NaN/inf, and value ranges.
"""

from __future__ import annotations

from functools import reduce
from math import gcd

import numpy as np

MAX_STRIDE = 256


def _gcd_all(values) -> int:
    vals = [int(v) for v in values if int(v) > 0]
    return reduce(gcd, vals, 0)


def word_classes(words: np.ndarray) -> np.ndarray:
    """0 zero, 1 integer-like (denormal), 2 float |v|<2, 3 float |v|>=2, 4 NaN/inf."""
    w = words.astype(np.uint32)
    exp = (w >> 23) & 0xFF
    cls = np.full(len(w), 3, dtype=np.int8)
    f = w.view(np.float32) if w.dtype.byteorder in ("=", "|") else w.astype("=u4").view(np.float32)
    cls[np.abs(f) < 2] = 2
    cls[exp == 0] = 1
    cls[exp == 0xFF] = 4
    cls[w == 0] = 0
    return cls


def period(words: np.ndarray, max_words: int = MAX_STRIDE // 4) -> tuple[int, float]:
    """Smallest period (in words) of the word-class sequence, and its match rate."""
    cls = word_classes(words)
    n = len(cls)
    if n < 4:
        return 1, 1.0
    best = []
    for p in range(1, min(max_words, n // 2) + 1):
        best.append(float(np.mean(cls[p:] == cls[:-p])))
    if not best:
        return 1, 1.0
    top = max(best)
    for p, r in enumerate(best, 1):
        if r >= top - 0.02:
            return p, r
    return 1, best[0]


def census(words: np.ndarray, stride: int, count: int) -> list[dict]:
    """Per-word statistics across ``count`` records of ``stride`` bytes."""
    k = stride // 4
    if k == 0 or count == 0:
        return []
    recs = words[:k * count].reshape(count, k).astype(np.uint32)
    f = recs.astype("=u4").view(np.float32)
    cls = word_classes(recs.ravel()).reshape(count, k)
    out = []
    for j in range(k):
        c, col, fc = cls[:, j], recs[:, j], f[:, j]
        finite = (c == 2) | (c == 3)
        e = {"offset": 4 * j, "zero": float(np.mean(c == 0)),
             "int_like": float(np.mean(c == 1)), "float": float(np.mean(finite)),
             "nan_inf": float(np.mean(c == 4)),
             # normal floats this tiny are usually packed small integers (u16 pairs)
             "tiny_float": float(np.mean(finite & (np.abs(fc) < 1e-20))),
             "int_min": int(col.min()), "int_max": int(col.max())}
        if finite.any():
            e["float_min"] = float(fc[finite].min())
            e["float_max"] = float(fc[finite].max())
        if len(col) > 1 and np.all(np.diff(col.astype(np.int64)) == 1):
            e["note"] = "counts up by 1 (an index)"
        out.append(e)
    return out


def _count_for(span: int, stride: int, ints: set) -> tuple[int | None, str]:
    """A header integer that is this region's record count at ``stride``, if any."""
    n = span // stride
    if n in ints and span == n * stride:
        return n, "span"
    for c in range(max(1, (span - 15) // stride), n + 1):
        if c in ints and 0 <= span - c * stride < 16:
            return c, "padded to 16"
    for extra in (1, 2):
        for c in range(max(1, (span - 15) // stride - extra), n - extra + 1):
            if c in ints and 0 <= span - (c + extra) * stride < 16:
                return c, f"{extra} trailing record{'s' if extra > 1 else ''}"
    return None, ""


def _table_starts(lead: np.ndarray) -> set:
    """Region starts named by a leading pointer table.

    Each distinct target starts a region, except that a run of three or more
    evenly spaced targets is an array of records (one region, at its first).
    """
    keep = set(int(t) for t in lead)
    d = np.diff(lead)
    i = 0
    while i < len(d):
        j = i
        while j + 1 < len(d) and d[j + 1] == d[i]:
            j += 1
        if j > i:                       # targets i .. j+1 evenly spaced
            keep -= set(int(t) for t in lead[i + 1:j + 2])
        i = j + 1
    return keep


def infer(data: bytes, words, order: str = ">") -> dict:
    """Pointer map, regions, strides and census of one data area."""
    size = len(data) // 4 * 4
    vals = np.frombuffer(data, dtype=order + "u4", count=size // 4)
    native = vals.astype(np.uint32)
    w = np.unique(np.asarray(words, dtype=np.int64))
    src = 4 * w
    tgt = native[w].astype(np.int64)
    nonnull = tgt != 0
    targets = np.unique(tgt[nonnull])
    pointers = [{"at": int(s), "to": int(t)} for s, t in zip(src, tgt)]
    # --- region starts
    starts = {0}
    how = "data start"
    if len(targets):
        lead = nonnull & (src < targets.min())
        if lead.any():
            starts |= _table_starts(np.unique(tgt[lead]))
            how = "pointer table in front of every target"
        else:
            diffs = np.diff(targets)
            g = _gcd_all(diffs)
            starts.add(int(targets[0]))
            if g:
                med = np.median(diffs)
                for i in np.flatnonzero(diffs > 8 * med):
                    starts.add(int(targets[i + 1]))
            how = "target gaps"
    starts = sorted(s for s in starts if s <= size)
    bounds = starts + [size]
    # integers of the leading region (a header's counts): u32 words and u16 halves
    lead_end = bounds[1] if len(bounds) > 1 else size
    lw = native[:min(lead_end // 4, 4096)]
    ints = set(int(x) for x in lw if 0 < x < 1 << 24)
    halves = np.frombuffer(data[:min(lead_end, 16384) // 2 * 2], dtype=order + "u2")
    ints |= set(int(x) for x in halves if x > 0)
    regions = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        span = b - a
        if span <= 0:
            continue
        in_t = targets[(targets >= a) & (targets < b)]
        in_s = src[(src >= a) & (src < b)]
        rw = native[a // 4:b // 4]
        ev = {"targets": int(len(in_t)), "pointers_inside": int(len(in_s))}
        g_t = _gcd_all(np.diff(np.concatenate([[a], in_t]))) if len(in_t) > 1 else 0
        g_s = _gcd_all(np.diff(in_s)) if len(in_s) > 1 else 0
        p_words, p_rate = period(rw[:1 << 18])
        ev.update(target_gcd=g_t, pointer_gcd=g_s, class_period=4 * p_words,
                  class_period_match=round(p_rate, 4))
        if g_t and g_s:
            base = g_t * g_s // gcd(g_t, g_s)
            basis = "target spacing and pointer spacing"
        elif g_t or g_s:
            base = g_t or g_s
            basis = "target spacing" if g_t else "pointer spacing"
        else:
            base = 4 * p_words
            basis = "word-class periodicity"
        stride, count, fit = None, None, ""
        if i > 0:
            for m in range(base, min(MAX_STRIDE, span) + 1, base):
                c, fit = _count_for(span, m, ints)
                if c is not None:
                    stride, count = m, c
                    basis += f"; record count {c} found in the header ({fit})"
                    break
        if stride is None:
            stride = base if 0 < base <= span else span
            count = span // stride
            if i == 0:
                stride, count, basis = span, 1, "leading region (one header record)"
        if len(in_t):
            ev["targets_on_boundaries"] = int(np.sum((in_t - a) % stride == 0))
        if len(in_s):
            fo, fc = np.unique((in_s - a) % stride, return_counts=True)
            ev["pointer_fields"] = {int(o): int(c) for o, c in zip(fo, fc)}
        regions.append({"start": int(a), "end": int(b), "span": int(span),
                        "stride": int(stride), "count": int(count), "basis": basis,
                        "evidence": ev, "census": census(rw, stride, min(count, len(rw) * 4 // stride))})
    # which region's pointers land in which region (the pointer graph between arrays)
    if regions and len(w):
        rs = np.array([r["start"] for r in regions], dtype=np.int64)
        sreg = np.searchsorted(rs, src, side="right") - 1
        treg = np.searchsorted(rs, tgt, side="right") - 1
        for i, r in enumerate(regions):
            into = nonnull & (treg == i)
            fr, fc = np.unique(rs[sreg[into]], return_counts=True)
            r["evidence"]["pointed_from"] = {int(a): int(c) for a, c in zip(fr, fc)}
            out_of = nonnull & (sreg == i)
            to, tc = np.unique(rs[treg[out_of]], return_counts=True)
            r["evidence"]["points_to"] = {int(a): int(c) for a, c in zip(to, tc)}
    return {"data_size": size, "byte_order": "big" if order == ">" else "little",
            "n_pointers": int(len(w)), "n_null": int(np.sum(~nonnull)),
            "n_targets": int(len(targets)), "region_starts_from": how,
            "pointers": pointers, "regions": regions}


def infer_object(buf, start: int = 0) -> dict:
    """Run :func:`infer` on the POF0 object at ``start`` of ``buf``."""
    from .finder import check
    from ..format import pof0 as _pof0
    from ..format.chunk import frame_at
    found = check(buf, start)
    frame = frame_at(buf, start)
    table = bytes(buf[frame.table_start:frame.end])
    t = _pof0.decode(table, found.pof0_dialect, data_words=frame.data_size // 4)
    data = bytes(buf[frame.data_start:frame.data_start + frame.data_size])
    out = infer(data, t.words, frame.byte_order)
    out.update(offset=start, tag=frame.tag.decode("latin-1"), pof0_dialect=found.pof0_dialect)
    return out
