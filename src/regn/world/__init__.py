"""Worlds beyond one REGN: tiles, a manifest, and queries across them.

* :func:`build` (:mod:`.build`) cuts a box into tiles, builds each (on every
  core, or a dask cluster) with wall points shared by neighbours
  (:mod:`.faces`), links their matching faces (:mod:`.links`) and writes
  the manifest (:mod:`.manifest`);
* :func:`regn.load` of the manifest gives a :class:`World` (:mod:`.world`):
  locate, find_path (:mod:`.route`), raycast, line of sight, wall distance,
  across tiles, with at most ``max_tiles`` tiles in memory;
* :func:`verify_world` (:mod:`.verify`): every tile, and every link.
"""

from __future__ import annotations

import importlib as _importlib

_API = {"build": "regn.world.building", "World": "regn.world.world",
        "load_world": "regn.world.world", "read_manifest": "regn.world.manifest",
        "verify_world": "regn.world.verify", "prepare": "regn.world.prepared"}

__all__ = sorted(_API)


def __getattr__(name):
    if name in _API:
        value = getattr(_importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'regn.world' has no attribute {name!r}")
