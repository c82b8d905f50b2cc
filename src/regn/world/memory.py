"""What a world holds in memory for its tiles, and giving freed memory back.

For each tile (:func:`held`): the loaded tile, its slot of the compiled
walk and its clearance structures; for the whole world (:func:`index_bytes`):
the manifest's arrays and what is made from them once. Arrays kept per
tile that are written once and dropped whole (a slot's buffers, the radius
search's tables and witnesses) live in anonymous maps of their own
(:func:`own_array`), which go back to the system when dropped.

A tile in a world's cache holds its file (a read-only map), its query
structures (:mod:`regn.world.prepared`: a private map of the ``.query``
file and the arrays widened from it) and, once searched, the path
search's state (face rows, heaps, output buffers: plain memory).
:func:`footprint` adds them up, each buffer once: ``mapped`` is the
length of file maps (pages the system may drop and read again), ``own``
the process's own memory (arrays and anonymous maps). A world's byte
budget (``regn.load(..., max_bytes=)``) counts both.

When a tile is dropped its arrays go back to the allocator; glibc keeps
freed heap memory for later (its threshold for giving large blocks their
own map rises as they are freed), so the process's resident size would
stay high: :func:`trim` asks it to give free memory back (``malloc_trim``
through ctypes; nothing elsewhere).
"""

from __future__ import annotations

import mmap

import numpy as np

#: Levels of containers the walk goes down (mesh -> scratch -> dict ->
#: record -> array is four).
DEPTH = 8


def footprint(mesh, *extra) -> dict:
    """``{"own": bytes, "mapped": bytes}`` of the arrays and maps reachable
    from ``mesh`` (its cached arrays and records), its query scratch
    (:func:`regn.query.common.scratch`) and ``extra`` (dicts kept with it),
    each buffer counted once."""
    from ..query.common import scratch
    seen, total = set(), {"own": 0, "mapped": 0}
    for root in (vars(mesh), scratch(mesh)) + extra:
        _walk(root, seen, total, 0)
    return total


#: the parts of what a world holds for a tile (:func:`held`)
PARTS = ("tile", "slot", "clearance")
#: a World's attributes keeping tiles' clearance structures, tile -> entry
#: (:mod:`regn.world.clearance`: wall sets, radius sets with witnesses)
CLEARANCE_ATTRIBUTES = ("_wall_sets", "_radius_sets")


def in_memory(world) -> str:
    """What ``repr(world)`` says it holds: the tiles :meth:`World.memory`
    lists, by what is kept of them: loaded (parsed, in the cache
    ``max_tiles`` bounds), else only a walk slot's arrays (read from the
    ``.query`` file), else only clearance sets. No bytes: adding them up
    walks every array (~2 ms CPU for 8 tiles held), too much for a repr."""
    loaded, slots = set(world._cache), world.__dict__.get("_tile_slots")
    walk = set(slots.used) - loaded if slots is not None else set()
    n = len(world._held())
    other = n - len(loaded) - len(walk)
    if n == 0:
        return f"no tiles in memory (max_tiles={world.max_tiles})"
    kinds = [f"{len(loaded)} loaded (max_tiles={world.max_tiles})"]
    kinds += [f"{len(walk)} walk arrays only"] if walk else []
    kinds += [f"{other} clearance sets only"] if other else []
    return f"{n} tile{'' if n == 1 else 's'} in memory: {', '.join(kinds)}"


def held(world, t) -> dict:
    """``{"own", "mapped", "parts": {part: {"own", "mapped"}}}`` of
    everything ``world`` holds for tile ``t``, each buffer counted once:
    ``tile``: the loaded tile (its file's map, its ``.query`` file's map
    and the arrays widened from it, its search state, what is kept with it);
    ``slot``: its slot of the compiled walk (the arrays read from its
    ``.query`` file, when the tile is not loaded its map, the search rows
    and the radius search's state and tables); ``clearance``: its wall set
    and the witnesses of :mod:`regn.world.clearance`. Zeros when the world
    holds nothing of it."""
    from ..query.common import scratch
    t = int(t)
    seen, parts = set(), {}
    mesh = world._cache.get(t)
    slots = world.__dict__.get("_tile_slots")
    roots = {"tile": [vars(mesh), scratch(mesh), world._extra.get(t, {}),
                      world._sidecars.get(t)] if mesh is not None else [],
             "slot": (slots.held(t) if slots is not None else [])
             + ([world._sidecars.get(t)] if mesh is None else []),
             "clearance": [world.__dict__.get(name, {}).get(t)
                           for name in CLEARANCE_ATTRIBUTES]}
    for part in PARTS:
        parts[part] = total = {"own": 0, "mapped": 0}
        for root in roots[part]:
            _walk(root, seen, total, 0)
    return {"own": sum(p["own"] for p in parts.values()),
            "mapped": sum(p["mapped"] for p in parts.values()), "parts": parts}


def hold_budget(world, settle) -> bool:
    """Drop what :meth:`regn.World._evict` says (the walk's slots of tiles
    not loaded only when ``settle``: between queries) until what ``world``
    holds for its tiles is within its ``max_bytes``; True when anything was
    dropped."""
    sizes = {t: world.footprint(t) for t in world._held()}
    if sum(sizes.values()) <= world.max_bytes:
        return False
    slots = world.__dict__.get("_tile_slots")
    steps = [("slot", t) for t in (slots.used if settle and slots is not None else ())]
    steps += [("clearance", t) for t in sizes if t not in world._cache]
    steps += [("tile", t) for t in list(world._cache)[:-1]]
    for kind, t in steps:
        if sum(sizes.values()) <= world.max_bytes:
            break
        if kind == "slot" and t in slots.used:
            slots.release(t)
        elif kind == "clearance":
            world._drop_clearance(t)
        elif kind == "tile" and t in world._cache:
            world._drop(t)
            world._drop_clearance(t)
        sizes[t] = world.footprint(t)
    return True


#: a World's attributes that hold tiles' structures (:func:`held`), not its index
TILE_ATTRIBUTES = ("_cache", "_extra", "_sidecars", "_tile_slots", "peak_bytes",
                   *CLEARANCE_ATTRIBUTES)


def index_bytes(world) -> int:
    """Bytes of the arrays a world keeps for the whole of it, not per
    loaded tile: the manifest's (tile records, links, portal nodes), the
    coarse route's graph and each tile's portal points and parts once
    made (a few kB a tile; bounded by the manifest, not by ``max_tiles``)."""
    seen, total = set(), {"own": 0, "mapped": 0}
    for name, v in vars(world).items():
        if name not in TILE_ATTRIBUTES:
            _walk(v, seen, total, 0)
    return total["own"] + total["mapped"]


def _walk(obj, seen, total, depth):
    if depth > DEPTH or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if isinstance(obj.base, np.ndarray):    # a view: to the array owning the buffer
            while isinstance(obj.base, np.ndarray):
                obj = obj.base
            if id(obj) in seen:
                return                          # (it, or another view of it, came first)
            seen.add(id(obj))
        base = obj.base.obj if isinstance(obj.base, memoryview) else obj.base
        if base is None:
            total["own"] += obj.nbytes
        else:
            _walk(base, seen, total, depth + 1)
    elif isinstance(obj, mmap.mmap):
        try:
            obj.size()                      # a file's map (anonymous ones have no file)
            total["mapped"] += len(obj)
        except (OSError, ValueError):       # anonymous, or closed
            total["own"] += len(obj) if not obj.closed else 0
    elif isinstance(obj, dict):
        for v in obj.values():
            _walk(v, seen, total, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _walk(v, seen, total, depth + 1)
    elif isinstance(obj, memoryview):
        _walk(obj.obj, seen, total, depth + 1)
    elif type(obj).__module__.startswith("regn."):     # regn's own records
        for name in getattr(type(obj), "__slots__", ()):
            _walk(getattr(obj, name, None), seen, total, depth + 1)
        _walk(getattr(obj, "__dict__", None), seen, total, depth + 1)


#: arrays of at least this many bytes that a world keeps per tile are made
#: in anonymous maps of their own (:func:`own_array`)
OWN_MAP_BYTES = 64 * 1024


def own_array(shape, dtype, fill=None) -> np.ndarray:
    """An array a world keeps with a tile (``fill``: its value everywhere,
    else zeros): from :data:`OWN_MAP_BYTES` on, in an anonymous map of its
    own, which goes back to the system whole when the array goes (glibc
    keeps freed heap blocks resident, and raises its threshold for giving a
    block its own map each time it frees a large one, so tiles read and
    dropped in turn would leave the heap ever larger); only the pages
    written take memory."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if n * dtype.itemsize < OWN_MAP_BYTES:
        out = np.zeros(shape, dtype)
    else:
        out = np.frombuffer(anonymous_map(n * dtype.itemsize), dtype, n).reshape(shape)
    if fill is not None and fill != 0:
        out.fill(fill)
    return out


def anonymous_map(size) -> mmap.mmap:
    """A private anonymous map of ``size`` bytes (zeros; its pages are the
    process's own memory, given back by ``MADV_DONTNEED``; a shared one
    would be shared memory that stays while mapped)."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE,
                         prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return mmap.mmap(-1, size)


def forget_pages(array) -> bool:
    """Give back the resident pages of the map under ``array`` (an
    anonymous one of :func:`own_array`: they read as zeros after; a private
    map of a file never written: they are read again from the file when
    next used); False when it lies in no map or the system cannot."""
    m = array.base if isinstance(array, np.ndarray) else None
    while isinstance(m, np.ndarray):
        m = m.base
    if isinstance(m, memoryview):
        m = m.obj
    if not (isinstance(m, mmap.mmap) and hasattr(m, "madvise")
            and hasattr(mmap, "MADV_DONTNEED")):
        return False
    m.madvise(mmap.MADV_DONTNEED)
    return True


def own_copy(v, dtype=None) -> np.ndarray:
    """``v`` as ``dtype`` in a new array of :func:`own_array`."""
    v = np.asarray(v)
    out = own_array(v.shape, v.dtype if dtype is None else dtype)
    out[...] = v
    return out


_LIBC = []


def trim() -> bool:
    """Give the allocator's free memory back to the system (glibc's
    ``malloc_trim(0)``); False where that is not available."""
    if not _LIBC:
        _LIBC.append(None)
        try:
            import ctypes
            import ctypes.util
            name = ctypes.util.find_library("c")
            lib = ctypes.CDLL(name) if name else None
            if lib is not None and hasattr(lib, "malloc_trim") \
                    and hasattr(lib, "gnu_get_libc_version"):
                lib.malloc_trim.argtypes = [ctypes.c_size_t]
                _LIBC[0] = lib
        except (OSError, AttributeError):
            pass
    if _LIBC[0] is None:
        return False
    _LIBC[0].malloc_trim(0)
    return True
