"""The unit lengths are told in to a person: metres for a map smaller than
:data:`METRE_EXTENT` (a level, a room: "path 87.3 m"), kilometres for a
larger one (an asteroid field: "path 143.2 km").

One choice per map, from its box, shared by ``regn info``, ``regn view``
and ``regn render`` (text, axes and titles alike). Only what a person reads
changes: the library and every ``--json`` document keep metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: A map whose longest box side is below this many metres is told in metres.
METRE_EXTENT = 10_000.0


@dataclass(frozen=True)
class Unit:
    """A display unit: its symbol and how many metres one of it is."""
    name: str
    metres: float

    def scale(self, metres):
        """``metres`` (a number or an array) in this unit."""
        return np.asarray(metres, dtype=np.float64) / self.metres

    def length(self, metres, spec=".1f") -> str:
        """'87.3 m' / '143.2 km'."""
        return f"{format(self.scale(float(metres)), spec)} {self.name}"

    def volume(self, cubic_metres, spec=".6g") -> str:
        """'254546 m^3' / '1.2 km^3'."""
        return f"{format(float(cubic_metres) / self.metres ** 3, spec)} {self.name}^3"


METRES = Unit("m", 1.0)
KILOMETRES = Unit("km", 1000.0)


def unit_for_extent(extent) -> Unit:
    """The unit for a map whose longest box side is ``extent`` metres."""
    return METRES if float(extent) < METRE_EXTENT else KILOMETRES


def unit_for_box(lo, hi) -> Unit:
    """The unit for a map with box ``lo`` .. ``hi`` (metres)."""
    return unit_for_extent(np.max(np.asarray(hi, np.float64) - np.asarray(lo, np.float64)))


def unit_of(mesh) -> Unit:
    """The unit for ``mesh``: a Mesh (its box), or a World (its manifest's box)."""
    m = getattr(mesh, "manifest", None)
    if m is not None:
        return unit_for_box(m.lo, m.hi)
    return unit_for_box(mesh.bbox_min, mesh.bbox_max)
