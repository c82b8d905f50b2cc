"""The data-area header (docs/format.md: "Header, 0x80 bytes")."""

from __future__ import annotations

import numpy as np

from ..format.layout import SECTION
from ._report import Outcome, Part, fmt, hexs, outcome_of

PART = Part("header")


@PART.check("header_extent", "seed", "extent == max - min == cell size x dims, exactly")
def _(run):
    h = run.mesh.header
    lo = np.asarray(h["bbox_min"], np.float64)
    hi = np.asarray(h["bbox_max"], np.float64)
    ext = np.asarray(h["extent"], np.float64)
    diff = hi[:3] - lo[:3]
    prod = np.asarray(h["cell_size"], np.float64) * np.asarray(h["dims"], np.float64)
    return outcome_of((ext != diff) | (ext != prod),
                      lambda k: f"{'xyz'[k]}: extent {fmt(ext[k])}, max-min "
                                f"{fmt(diff[k])}, cell*dims {fmt(prod[k])}",
                      "axes where extent != max-min == cell*dims",
                      f"extent {fmt(ext)} == max-min == cell*dims")


@PART.check("header_cell_count", "seed", "the cell count is nx * ny * nz")
def _(run):
    h = run.mesh.header
    nx, ny, nz = (int(d) for d in h["dims"])
    n_c = int(h["counts"][SECTION["cells"]])
    return Outcome(int(n_c == nx * ny * nz), 1,
                   f"counts[3] = {n_c}, nx*ny*nz = {nx}*{ny}*{nz} = {nx * ny * nz}")


@PART.check("header_bbox_w", "seed", "the bbox corners' w is 1.0")
def _(run):
    h = run.mesh.header
    w = [float(h["bbox_min"][3]), float(h["bbox_max"][3])]
    return Outcome(sum(x == 1.0 for x in w), 2,
                   f"bbox min w = {fmt(w[0])}, max w = {fmt(w[1])}")


@PART.check("header_unknown_words", "info", "the [unknown] header words (written 0)")
def _(run):
    h = run.mesh.header
    unknown = {"extent_w": int(h["extent_w"]), "cell_size_w": int(h["cell_size_w"]),
               "dims_w": int(h["dims_w"]), "reserved_5c": int(h["reserved_5c"]),
               "reserved_78": [int(x) for x in h["reserved_78"]]}
    flat = [v for x in unknown.values() for v in (x if isinstance(x, list) else [x])]
    return Outcome(sum(v == 0 for v in flat), len(flat),
                   ", ".join(f"{k}={hexs(v)}" for k, v in unknown.items()))
