"""The grid's records: cells, items and references (docs/format.md: "The
grid: sections 3, 4, 5"). How the grid's lists relate to the geometry is
checked in :mod:`regn.checks.geometry`."""

from __future__ import annotations

import numpy as np

from ..format.layout import SECTION, SIZES
from ._report import Outcome, Part, at, outcome_of

PART = Part("grid records")


def _cells(run):
    cells = run.mesh.parts.sections["cells"]
    return cells["count"].astype(np.int64), cells["item_ptr"].astype(np.int64)


def _occupied(run):
    return np.flatnonzero(run.mesh.cell_item >= 0)


@PART.check("cell_counts", "seed", "a cell's item count is 0 or 1")
def _(run):
    count, _ = _cells(run)
    return outcome_of((count != 0) & (count != 1), lambda i: f"cell {i} count {count[i]}",
                      "cells with a count not 0 or 1")


@PART.check("cell_count_pointer", "seed", "a cell's item pointer is non-zero exactly when "
            "its count is 1")
def _(run):
    count, ptr = _cells(run)
    return outcome_of((count == 1) != (ptr != 0),
                      lambda i: f"cell {i} count {count[i]} item pointer {ptr[i]:#x}",
                      "cells where count==1 and pointer!=0 disagree")


@PART.check("items_one_cell_each", "seed", "each item belongs to exactly one cell")
def _(run):
    mesh = run.mesh
    per_item = np.bincount(mesh.cell_item[_occupied(run)], minlength=mesh.n_items)
    return outcome_of(per_item != 1, lambda i: f"item {i} pointed to by {per_item[i]} cells",
                      "items not pointed to by exactly one cell")


@PART.check("items_in_cell_order", "seed", "items appear in cell order")
def _(run):
    ci = run.mesh.cell_item
    occ = _occupied(run)
    return outcome_of(ci[occ] != np.arange(len(occ)),
                      lambda k: f"occupied cell {occ[k]} (#{k}) points to item {ci[occ[k]]}",
                      "occupied cells out of item order")


@PART.check("refs_packed", "seed", "the items' reference runs are packed in item order")
def _(run):
    n = run.mesh.parts.sections["items"]["n"].astype(np.int64)
    start = run.mesh.item_ref_start
    packed = np.concatenate([[0], np.cumsum(n)[:-1]]) if len(n) else n
    return outcome_of(start != packed,
                      lambda i: f"item {i} refs at reference {start[i]}, packing gives "
                                f"{packed[i]}", "items whose refs are not packed in cell order")


@PART.check("refs_all_used", "inferred", "the items use every reference")
def _(run):
    used = int(run.mesh.parts.sections["items"]["n"].astype(np.int64).sum())
    n_refs = run.mesh.n_refs
    return Outcome(int(used == n_refs), 1,
                   f"items use {used} references, section 5 has {n_refs}")


@PART.check("item_n_positive", "seed", "an item lists at least one reference")
def _(run):
    n = run.mesh.parts.sections["items"]["n"].astype(np.int64)
    return outcome_of(n < 1, lambda i: f"item {i} n = {n[i]}", "items with n < 1")


def _pointer_into(run, section, field, target):
    """Each record's pointer ``field``, relative to section ``target``."""
    parts = run.mesh.parts
    ptr = parts.sections[section][field].astype(np.int64)
    return ptr, ptr - parts.section_offsets[SECTION[target]]


@PART.check("refs_on_tet_boundaries", "seed", "a reference points at a tetrahedron record")
def _(run):
    ptr, rel = _pointer_into(run, "refs", "tet_ptr", "tets")
    stride = SIZES["tets"]
    return outcome_of(rel % stride != 0,
                      lambda i: f"ref {i} -> {int(ptr[i]):#x} (+{int(rel[i] % stride)} into "
                                f"tet {int(rel[i] // stride)})",
                      f"references not on a {stride}-byte record boundary")


@PART.check("item_pointers_on_boundaries", "seed", "a cell's item pointer points at an "
            "item record")
def _(run):
    ptr, rel = _pointer_into(run, "cells", "item_ptr", "items")
    stride = SIZES["items"]
    return outcome_of((ptr != 0) & (rel % stride != 0),
                      lambda i: f"cell {i} -> {int(ptr[i]):#x} (+{int(rel[i] % stride)} into "
                                f"item {int(rel[i] // stride)})",
                      f"cell item pointers not on a {stride}-byte record boundary")


@PART.check("item_refs_on_boundaries", "seed", "an item's refs pointer points at a "
            "reference")
def _(run):
    ptr, rel = _pointer_into(run, "items", "refs_ptr", "refs")
    stride = SIZES["refs"]
    return outcome_of(rel % stride != 0, lambda i: f"item {i} refs -> {int(ptr[i]):#x}",
                      f"item refs pointers not on a {stride}-byte boundary")


@PART.check("item_cell_index_field", "info", "an item's cell_index field is its cell's "
            "linear index (builder convention)")
def _(run):
    mesh = run.mesh
    ci, occ = mesh.cell_item, _occupied(run)
    expect = np.full(mesh.n_items, -1, np.int64)
    ok = ci[occ] < mesh.n_items
    expect[ci[occ][ok]] = occ[ok]
    same = np.count_nonzero(mesh.parts.sections["items"]["cell_index"].astype(np.int64)
                            == expect)
    return Outcome(int(same), mesh.n_items,
                   f"item {at('items', 'cell_index')} equals its cell's linear index "
                   "(builder convention)")
