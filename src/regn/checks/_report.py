"""What verify returns (:class:`Check`, :class:`VerifyReport`), and how a
check is declared (:class:`Part`, :class:`Statement`).

Every check is declared once, in the module of the spec part it belongs to,
by decorating the function that judges it::

    @PART.check("face_w_one", "seed", "the word after the point is 1.0f")
    def _(run):
        return outcome_of(bad_mask, describe, "faces whose ... ")

The declaration is the single source of the check's stable name, its mark
(``seed``, ``inferred`` or ``info``), the spec statement it tests, and (the
function's body) where its per-record result comes from. An ``info`` check
that counts a quality defect (pinches) names what it counts, ``quality=(what,
out of what)``: the report shows ``total - passed`` of them as quality
information (:attr:`VerifyReport.quality`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np

from ..format.layout import field_offsets

#: How many offending records a failing detail lists.
SHOW = 5


@dataclass
class Check:
    name: str
    kind: str          # 'seed' | 'inferred' | 'info'
    status: str        # 'pass' | 'fail' | 'info'
    passed: int
    total: int
    detail: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "status": self.status,
                "passed": int(self.passed), "total": int(self.total),
                "detail": self.detail}


@dataclass
class VerifyReport:
    path: str | None
    strict: bool
    checks: list = field(default_factory=list)
    byte_order: str = "big"
    pof0_dialect: int | None = None
    pof0_note: str = ""
    roundtrip_identical: bool = False
    first_difference: int | None = None
    seconds: float = 0.0
    #: Measured quality, never required: {what: :class:`Quality`}, e.g.
    #: ``{"pinch edges": Quality(5, 1234, "boundary edges"), ...}`` (from the
    #: info checks that declare ``quality``: their ``total - passed``).
    quality: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every required check passes (seed always; inferred when strict)."""
        need = ("seed", "inferred") if self.strict else ("seed",)
        return all(c.status != "fail" for c in self.checks if c.kind in need)

    @property
    def failed(self) -> list:
        """The checks that failed (any kind)."""
        return [c for c in self.checks if c.status == "fail"]

    def check(self, name) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def __getitem__(self, name) -> Check:
        return self.check(name)

    def to_dict(self) -> dict:
        return {"path": self.path, "ok": bool(self.ok), "byte_order": self.byte_order,
                "pof0_dialect": self.pof0_dialect,
                "roundtrip_identical": bool(self.roundtrip_identical),
                "checks": [c.to_dict() for c in self.checks]}


class Quality(NamedTuple):
    """One measured quality count: ``count`` defects (pinch edges...) among
    ``total`` of what ``of`` names (boundary edges...)."""

    count: int
    total: int
    of: str


class Outcome(NamedTuple):
    """What a check's judge finds: ``passed`` of ``total`` records (pairs,
    words...), and a detail naming the first offending ones."""

    passed: int
    total: int
    detail: str = ""


def outcome_of(bad, describe, what, ok_detail="") -> Outcome:
    """The outcome of a check over records, ``bad`` marking the failing ones:
    the detail lists the first :data:`SHOW` as ``describe(index)`` gives them."""
    bad = np.asarray(bad, dtype=bool).ravel()
    idx = np.flatnonzero(bad)
    detail = listing(idx, describe, what) if len(idx) else ok_detail
    return Outcome(len(bad) - len(idx), len(bad), detail)


@dataclass(frozen=True)
class Statement:
    """One check of the spec: its stable name, its mark, the statement it
    tests, and the judge that finds its :class:`Outcome` for one run."""

    name: str
    kind: str                      # 'seed' | 'inferred' | 'info'
    says: str
    judge: Callable
    quality: tuple = ()            # info checks: (what total - passed counts, out of what)

    def run(self, run) -> Check:
        passed, total, detail = self.judge(run)
        status = "info" if self.kind == "info" else \
            ("pass" if passed == total else "fail")
        return Check(self.name, self.kind, status, int(passed), int(total), detail)


class Part:
    """The checks of one part of the spec, in report order."""

    def __init__(self, title: str):
        self.title = title
        self.statements: list[Statement] = []

    def check(self, name: str, kind: str, says: str, quality: tuple = ()):
        """Declare the decorated function as the judge of check ``name``
        (``quality``: see the module docstring)."""
        assert kind in ("seed", "inferred", "info"), kind
        assert not quality or (kind == "info" and len(quality) == 2), (kind, quality)

        def declare(judge):
            self.statements.append(Statement(name, kind, says, judge, tuple(quality)))
            return judge
        return declare


# --- detail text ----------------------------------------------------------------------

def fmt(v) -> str:
    """A number or array as the details print it (floats to 7 digits)."""
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.7g}"
    if isinstance(v, np.ndarray):
        return "[" + ", ".join(fmt(x) for x in v.ravel()) + "]"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def hexs(v) -> str:
    """A u32 (or a list of them) as 0x%08x."""
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:#010x}" for x in v) + "]"
    return f"{v:#010x}"


def at(record: str, field: str) -> str:
    """Where ``field`` lies in a ``record`` of the layout, as details give it
    ("+0x1C")."""
    return f"+0x{field_offsets(record)[field]:X}"


def listing(idx, describe, what) -> str:
    """'<n> <what>: <describe(i)>; ...' over the first :data:`SHOW` of ``idx``."""
    idx = np.asarray(idx).ravel()
    shown = "; ".join(describe(int(i)) for i in idx[:SHOW])
    more = f" (+{len(idx) - SHOW} more)" if len(idx) > SHOW else ""
    return f"{len(idx)} {what}: {shown}{more}"
