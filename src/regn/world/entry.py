"""``regn.generate``: one REGN, or with ``tiles=`` a world of them.

    mesh = regn.generate(bbox, rocks, agent_radius=50)                 # a Mesh
    world = regn.generate(bbox, rocks, detail=32, tiles="auto",
                          out="rocks/world.json", workers=2)           # a World

Without ``tiles`` this is :func:`regn.builder.generate.generate` (one REGN
in memory). With ``tiles`` it is :func:`regn.world.build` — the code path of
``regn build ... -o DIR/world.json`` — writing the tiles and the manifest
``out``, and returns the world opened (:func:`regn.load`): the same queries
as a Mesh, across the tiles. The build report is ``world.manifest.build``.
"""

from __future__ import annotations

from ..builder.generate import generate as _generate_one
from ..builder.obstacles import checked_obstacles
from ..errors import BuildError

#: The options that only a world takes.
WORLD_ONLY = ("out", "workers", "client", "force", "max_tiles")


def generate(bbox, obstacles=(), *, tiles=None, out=None, workers=None, client=None,
             force=False, max_tiles=None, **options):
    """A :class:`regn.Mesh` of the free space of ``bbox`` around
    ``obstacles`` (every option as :func:`regn.builder.generate.generate`:
    ``agent_radius``, ``dims``, ``detail``, ``seed``, ``progress``,
    ``coverage_samples``, ``level`` ...), or, with ``tiles``, a world.

    ``tiles``: ``"auto"`` (as many tiles as the obstacles need at
    ``detail``), a tile size in metres (one number or three), or True (=
    ``"auto"``). The world is built by :func:`regn.world.build` into
    ``out`` (``DIR/NAME.json``, required; its tiles ``DIR/NAME_i_j_k.rgn``
    beside it; an existing file is refused unless ``force``), on
    ``workers`` processes (default: one per core) or a dask ``client``
    (a ``distributed.Client`` or a scheduler address), and returned opened
    as a :class:`regn.world.World` keeping at most ``max_tiles`` tiles
    loaded (default 8). A level (``level=``) takes its options
    (``crack``, ``voxel_size``, ``min_block`` ...) as for one REGN.
    """
    obstacles = checked_obstacles(obstacles)
    if tiles is None or tiles is False:
        world = {"out": out, "workers": workers, "client": client, "force": force,
                 "max_tiles": max_tiles}
        given = [k for k in WORLD_ONLY if world[k] not in (None, False)]
        if given:
            raise BuildError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} "
                             "to a world: give tiles= too")
        return _generate_one(bbox, obstacles, **options)
    if out is None:
        raise BuildError("a world is written to files: give out='DIR/NAME.json'")
    from ..io import load
    from .building import build
    level = options.pop("level", None)
    known = {"agent_radius", "detail", "dims", "seed", "coverage_samples", "progress"}
    level_options = {k: options.pop(k) for k in list(options) if k not in known}
    if level_options and level is None:
        raise TypeError(f"generate() got unexpected options {sorted(level_options)}")
    build(bbox, obstacles, out=out, tile_size="auto" if tiles is True else tiles,
          workers=workers, client=client, force=force, level=level,
          level_options=level_options or None, **options)
    return load(out, max_tiles=max_tiles)

