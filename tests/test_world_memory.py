"""A world's memory and its tiles' kept query structures (regn.world.memory,
regn.world.prepared): dropped tiles let go of everything, the byte budget,
sidecars that give the same answers, and stale or damaged sidecars refused.

One tiny world (a 16 km cube, 5 asteroids, 2x2x2 tiles at detail 0.25) is
built once and shared; tests that spoil files work on copies."""

import gc
import json
import shutil
import weakref

import numpy as np
import pytest

import regn
from regn.builder.obstacles import random_asteroid_field
from regn.cli import main
from regn.errors import FormatError
from regn.world import build as build_world
from regn.world import prepared
from regn.world.manifest import read_manifest
from regn.world.memory import footprint, trim
from regn.world.prepared import narrow, tile_arrays

H = 8_000.0


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    build_world(((-H,) * 3, (H,) * 3), random_asteroid_field(5, seed=3, half_extent=H),
                out=str(d / "world.json"), tile_size=H, workers=1, detail=0.25,
                coverage_samples=2000)
    return d


@pytest.fixture()
def copy(world_dir, tmp_path):
    d = tmp_path / "w"
    shutil.copytree(world_dir, d)
    return d


def _pairs(n, seed=5):
    return np.random.default_rng(seed).uniform(-0.9 * H, 0.9 * H, (n, 2, 3))


def _maps_of(path):
    try:
        with open("/proc/self/maps") as fh:
            return [line for line in fh if line.rstrip().endswith(str(path))]
    except OSError:
        pytest.skip("no /proc/self/maps")


# --- memory ----------------------------------------------------------------------------
def test_an_evicted_tile_lets_go_of_its_mesh_and_maps(world_dir):
    w = regn.load(world_dir / "world.json", max_tiles=1)
    mesh = w.tile(0)
    a, b = mesh.random_points(2, seed=1)
    assert mesh.find_path(a, b).found               # search state built on the tile
    assert _maps_of(world_dir / "world_0_0_0.rgn") and _maps_of(world_dir / "world_0_0_0.query")
    gone = weakref.ref(mesh)
    del mesh
    w.tile(1)
    gc.collect()
    assert gone() is None
    assert w.loaded == [1]
    assert not _maps_of(world_dir / "world_0_0_0.rgn")
    assert not _maps_of(world_dir / "world_0_0_0.query")
    w.clear()
    gc.collect()
    assert not _maps_of(world_dir / "world_0_0_1.rgn")


def test_repr_counts_the_tiles_memory_lists(world_dir):
    """A path across the world with max_tiles=1: one tile stays loaded, the
    others it crossed keep only their walk slots' arrays; the repr says how
    many of each, as memory() lists them."""
    w = regn.load(world_dir / "world.json", max_tiles=1)
    assert repr(w).endswith("8 tiles 2x2x2, " f"{w.n_tets} tetrahedra, 12 links; "
                            "no tiles in memory (max_tiles=1)>")
    assert w.find_path((-0.9 * H,) * 3, (0.9 * H,) * 3).found
    tiles = w.memory()["tiles"]
    walk = [t for t, f in tiles.items() if t not in w.loaded
            and f["parts"]["slot"]["own"] + f["parts"]["slot"]["mapped"] > 0]
    assert len(tiles) > len(w.loaded) == 1 and len(walk) == len(tiles) - 1
    assert repr(w).endswith(f"; {len(tiles)} tiles in memory: 1 loaded (max_tiles=1), "
                            f"{len(walk)} walk arrays only>")


def test_footprint_counts_the_files_and_the_search_state(world_dir):
    w = regn.load(world_dir / "world.json", max_tiles=2)
    w.peak_bytes = {}
    m = w.manifest
    mesh = w.tile(0)
    f0 = w.footprint(0, split=True)
    files = m.tiles[0].bytes + (world_dir / "world_0_0_0.query").stat().st_size
    assert f0["mapped"] == files                     # the tile's map and its sidecar's
    a, b = mesh.random_points(2, seed=2)
    mesh.find_path(a, b)
    f1 = w.footprint(0, split=True)
    assert f1["mapped"] == files and f1["own"] > f0["own"] + 8 * mesh.n_faces
    assert w.footprint(0) == f1["own"] + f1["mapped"] == w.peak_bytes[0]
    assert w.footprint(5) == 0                        # not loaded
    assert w.memory()["own"] == f1["own"]
    assert footprint(mesh) == {"own": f1["own"], "mapped": f1["mapped"]} == f1["parts"]["tile"]
    assert trim() in (True, False)


def test_a_buffer_held_through_several_views_counts_once(world_dir):
    mesh = regn.load(world_dir / "world.json").tile(0)
    alone = footprint(mesh)
    buf = np.zeros(1000)
    kept = {"rows": buf[:500], "all": buf, "tail": buf[10:].reshape(-1, 10)[::2]}
    assert footprint(mesh, kept)["own"] == alone["own"] + 8000
    assert footprint(mesh, {"views": [buf[1:], buf[2:]]})["own"] == alone["own"] + 8000


def test_byte_budget_drops_tiles_before_the_tile_count_does(world_dir):
    one = regn.load(world_dir / "world.json").footprint   # (a fresh tile's bytes)
    w = regn.load(world_dir / "world.json", max_tiles=8)
    w.tile(0)
    size = w.footprint(0)
    w = regn.load(world_dir / "world.json", max_tiles=8, max_bytes=int(2.5 * size))
    for t in range(4):
        w.tile(t)
        assert sum(w.footprint(u) for u in w.loaded) <= int(2.5 * size)
    assert w.loaded == [2, 3]
    assert one(0) == 0
    with pytest.raises(regn.QueryError):
        regn.load(world_dir / "world.json", max_bytes=0)


# --- sidecars --------------------------------------------------------------------------
def test_narrow_keeps_every_value():
    assert narrow(np.array([0, 255], np.int64)).dtype == np.uint8
    assert narrow(np.array([-1, 100], np.int64)).dtype == np.int8
    assert narrow(np.array([-1, 65535], np.int64)).dtype == np.int32
    assert narrow(np.array([0, 65535], np.int64)).dtype == np.uint16
    assert narrow(np.array([2 ** 40], np.int64)).dtype == np.int64
    f = np.array([0.5, -0.0, np.nan, 1e30], np.float32).astype(np.float64)
    assert narrow(f).dtype == np.float32
    assert np.array_equal(narrow(f).astype(np.float64).view(np.uint64), f.view(np.uint64))
    assert narrow(np.array([0.1])).dtype == np.float64      # 0.1 is no float32
    assert narrow(np.array(7, np.int64)).shape == ()


def test_sidecar_round_trip_gives_the_same_arrays(world_dir):
    """Every array install puts back (widened and derived ones too) equals,
    type and bits, what the tile builds for itself."""
    from regn.query.common import scratch
    w = regn.load(world_dir / "world.json")
    for t in range(w.n_tiles):
        built = tile_arrays(w.tile(t, prepared=False))
        w.clear()
        mesh = w.tile(t)
        s = scratch(mesh)
        assert isinstance(mesh, prepared.KeptMesh)
        assert not set(prepared.MESH_ARRAYS) & set(vars(mesh))     # widened when used
        kept = {f"mesh_{k}": getattr(mesh, k) for k in prepared.MESH_ARRAYS}
        assert not mesh.__dict__["_kept_arrays"]                  # ... from the file,
        assert mesh._ref_tet is None                              # not from the records
        kept.update({k: s["path_arrays"][k[5:]] for k in built if k.startswith("path_")})
        kept.update(loc_W=s["loc"]["W"], loc_nbv=s["loc"]["nbv"], components=s["components"])
        kept.update({f"fine_{k}": v for k, v in s["loc"]["fine"].items()})
        kept["exit_face"], kept["exit_normal"] = s["exits"]
        assert set(kept) == set(built)
        for k, v in built.items():
            v, got = np.asarray(v), np.asarray(kept[k])
            assert got.dtype == v.dtype and got.shape == v.shape, k
            assert got.tobytes() == v.tobytes(), k
        w.clear()


def test_sidecar_gives_the_same_answers(world_dir, copy):
    for f in copy.glob("*.query"):
        f.unlink()
    kept, plain = regn.load(world_dir / "world.json"), regn.load(copy / "world.json")
    for a, b in _pairs(6):
        p, q = kept.find_path(a, b), plain.find_path(a, b)
        assert p.status == q.status and p.tiles == q.tiles
        if p.found:
            assert np.array_equal(p.points, q.points)
        r, s = kept.raycast(a, b), plain.raycast(a, b)
        assert r.status == s.status and r.face == s.face
    pts = _pairs(20).reshape(-1, 3)
    assert np.array_equal(kept.locate(pts), plain.locate(pts))


def _header(path):
    data = path.read_bytes()
    return json.loads(data[16:16 + int.from_bytes(data[8:16], "little")])


def test_sidecars_store_each_array_once_narrow_and_no_derived_array(world_dir):
    """The walk's arrays are the only copy of the values they share with
    the tile's (face vertices, neighbours, face order, vertices, face
    centroids and tetrahedron faces gathered from them); indices fit 16
    bits, exit normals float32; the file, walk arrays included, under 3/4
    of the arrays at the width the queries use."""
    mesh = regn.load(world_dir / "world.json").tile(0, prepared=False)
    full = sum(np.asarray(v).nbytes for v in tile_arrays(mesh).values())
    path = world_dir / "world_0_0_0.query"
    head = _header(path)
    assert not set(prepared.DERIVED) & set(head["arrays"])
    assert set(head["remade"]) == set(prepared.REMADE)
    assert not set(prepared.REMADE) & set(head["arrays"])
    kept, types = prepared.read_sidecar(path, read_manifest(world_dir / "world.json"), 0)
    for k in ("mesh_tets", "mesh_boundary_faces", "exit_face"):
        assert kept[k].dtype == np.uint16 and types[k] == np.int64
    assert kept["exit_normal"].dtype == np.float32 and types["exit_normal"] == np.float64
    assert kept["loc_W"].dtype == np.float64 and kept["fine_indices"].dtype == np.int32
    # the walk's arrays (regn.world.prepared.STATIC) are kept as the walk reads them
    from regn.world.prepared import STATIC
    walk = {k[5:]: v for k, v in kept.items() if k.startswith("walk_")}
    assert set(walk) == set(STATIC)
    assert all(v.dtype == STATIC[k] for k, v in walk.items())
    assert path.stat().st_size < 0.75 * full


def test_another_tiles_sidecar_is_refused(copy, capsys):
    shutil.copy(copy / "world_0_0_0.query", copy / "world_0_0_1.query")
    w = regn.load(copy / "world.json")
    with pytest.raises(FormatError, match=r"world_0_0_1\.query: made for another tile.*stale"):
        w.tile(1)
    assert w.tile(0).n_tets > 0
    a, b = w.manifest.tiles[1].lo + 1.0, w.manifest.tiles[1].hi - 1.0
    assert main(["path", str(copy / "world.json"), *map(str, a), *map(str, b)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("regn:") and "world_0_0_1.query" in err[0]
    assert "prepare" in err[0]


def test_verify_names_a_stale_sidecar(copy, capsys):
    from regn.world.verify import verify_world
    shutil.copy(copy / "world_0_0_0.query", copy / "world_0_0_1.query")
    rep = verify_world(copy / "world.json")
    bad = [t for t in rep.tiles if not t["ok"]]
    assert not rep.ok and len(bad) == 1 and "world_0_0_1.query" in bad[0]["problem"]
    assert main(["verify", str(copy / "world.json")]) != 0
    assert "world_0_0_1.query" in capsys.readouterr().out


@pytest.mark.parametrize("spoil", ["flip", "truncate", "empty", "header"])
def test_a_damaged_sidecar_is_refused(copy, spoil):
    p = copy / "world_0_0_1.query"
    data = bytearray(p.read_bytes())
    if spoil == "flip":
        data[-100] ^= 0x40
    elif spoil == "truncate":
        data = data[:len(data) // 2]
    elif spoil == "empty":
        data = b""
    else:
        data[20:30] = b"!" * 10
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"world_0_0_1\.query"):
        regn.load(copy / "world.json").tile(1)


def test_a_sidecar_changed_after_its_check_is_checked_again(copy):
    w = regn.load(copy / "world.json", max_tiles=1)
    w.tile(1)
    w.tile(0)
    p = copy / "world_0_0_1.query"
    data = bytearray(p.read_bytes())
    data[-100] ^= 0x40
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="damaged"):
        w.tile(1)


def test_an_old_sidecar_is_not_used(copy):
    p = copy / "world_0_0_1.query"
    data = p.read_bytes()
    n = int.from_bytes(data[8:16], "little")
    head = json.loads(data[16:16 + n])
    head["version"] = 3
    text = json.dumps(head).encode().ljust(n)
    p.write_bytes(data[:16] + text + data[16 + n:])
    w = regn.load(copy / "world.json")
    with pytest.warns(RuntimeWarning, match="format version 3"):
        mesh = w.tile(1)
    a, b = mesh.random_points(2, seed=4)
    assert mesh.find_path(a, b).found               # the tile built its own structures
    assert prepared.prepare(copy / "world.json") == 8
    w.clear()
    assert prepared.install(w.manifest, 1, w.tile(1, prepared=False))


def test_a_format_4_sidecar_is_still_used(world_dir, copy, monkeypatch):
    """A world built before the arrays were stored once (format 4: every
    array stored) reads its files as they are, without a warning, and
    answers as before."""
    m = read_manifest(copy / "world.json")
    with monkeypatch.context() as mp:
        mp.setattr(prepared, "REMADE", ())
        mp.setattr(prepared, "VERSION", 4)
        for t in range(len(m.tiles)):
            prepared.write_sidecar(m, t, regn.load(copy / "world.json").tile(t, prepared=False))
    head = _header(copy / "world_0_0_1.query")
    assert head["version"] == 4 and not head["remade"] and "mesh_neighbors" in head["arrays"]
    old, new = regn.load(copy / "world.json"), regn.load(world_dir / "world.json")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a, b in _pairs(4, seed=9):
            p, q = old.find_path(a, b), new.find_path(a, b)
            assert p.status == q.status and np.array_equal(p.points, q.points)
            for end in (b, (a[0], a[1], 2 * H)):            # (the second leaves the world)
                r, s = old.raycast(a, end), new.raycast(a, end)
                assert r.status == s.status and r.face == s.face
                assert np.array_equal(r.normal, s.normal, equal_nan=True)
    assert r.status == "hit" and np.isfinite(r.normal).all()
    assert old.walk_reads > 0 and old.tiles_read > 0


# --- what a world holds, bounded by max_tiles and max_bytes ----------------------------
def _queries(w, pairs, r):
    """Point and sphere paths and the nearest free points of ``pairs``: a
    list of comparable answers."""
    out = []
    for a, b in pairs:
        for radius in (0.0, r):
            try:
                p = w.find_path(a, b, radius=radius)
            except regn.QueryError:        # (a sphere's route through more tiles than slots)
                out.append("refused")
                continue
            out.append((p.status, p.tiles if p.found else None,
                        p.points.round(9).tolist() if p.found else None))
        out.append(w.nearest([a], radius=r).points.round(9).tolist())
    return out


def _held_kinds(w):
    """Tiles with a loaded tile, a walk slot, clearance structures (memory())."""
    got = {part: {t for t, f in w.memory()["tiles"].items()
                  if f["parts"][part]["own"] + f["parts"][part]["mapped"]}
           for part in ("tile", "slot", "clearance")}
    slots = w._tile_slots
    assert got["tile"] == set(w.loaded)
    assert got["slot"] == set(slots.used)
    assert got["clearance"] == set(w._wall_sets) | set(w._radius_sets)
    return got, slots


def test_a_world_holds_only_max_tiles_tiles_structures(world_dir):
    """max_tiles=2, many point and sphere queries: at most 2 loaded tiles, 2
    walk slots (their buffers, radius tables), 2 wall sets and 2 tiles'
    witnesses, maps only of the tiles held; every answer the one a fresh
    World gives (nothing kept changes an answer)."""
    w = regn.load(world_dir / "world.json", max_tiles=2)
    pairs = _pairs(8, seed=11)
    r = 300.0
    got = []
    for k, (a, b) in enumerate(pairs):
        got += _queries(w, [(a, b)], r)
        held, slots = _held_kinds(w)
        assert all(len(v) <= 2 for v in held.values()), held
        assert len(w._wall_sets) <= 2 and len(w._radius_sets) <= 2
        assert len(slots.bufs) <= 2 and set(slots.arrays) == set(slots.used.values())
        state = [s for s in slots.radius_lists.state if s] if hasattr(slots, "radius_lists") \
            else []
        assert len(state) <= 2
        assert set(w._sidecars) <= held["tile"] | held["slot"]
        gc.collect()
        mapped = {line.rsplit("/", 1)[1].strip() for line in _maps_of(world_dir)}
        names = {f"world_{'_'.join(map(str, w.manifest.tiles[t].index))}"
                 for t in held["tile"] | held["slot"]}
        assert {m.rsplit(".", 1)[0] for m in mapped} <= names, (mapped, names)
        if k == 0:
            assert held["clearance"] and held["slot"]   # the queries used them
    fresh = []
    for a, b in pairs:
        fresh += _queries(regn.load(world_dir / "world.json", max_tiles=2), [(a, b)], r)
    assert got == fresh
    w.clear()
    gc.collect()
    assert not _maps_of(world_dir) and w.memory()["total"] == w.memory()["index"]


def test_memory_counts_the_walk_slots_and_the_witnesses(world_dir):
    w = regn.load(world_dir / "world.json", max_tiles=8)
    a, b = _pairs(1, seed=3)[0]
    w.find_path(a, b)
    m = w.memory()
    assert m["parts"]["slot"]["own"] > 0 and m["parts"]["clearance"]["own"] == 0
    assert m["own"] + m["mapped"] == sum(w.footprint(t) for t in m["tiles"])
    assert m["total"] == m["own"] + m["mapped"] + m["index"] and m["index"] > 0
    w.find_path(a, b, radius=300.0)
    m2 = w.memory()
    assert m2["parts"]["clearance"]["own"] > 0              # wall sets and witnesses
    for t in w._radius_sets:
        f = w.footprint(t, split=True)["parts"]["clearance"]
        assert f["own"] >= w._radius_sets[t]["witness"].nbytes
    assert set(m2["tiles"]) == set(w.loaded) | set(w._tile_slots.used) \
        | set(w._wall_sets) | set(w._radius_sets)


def test_max_bytes_drops_what_the_witnesses_push_over_the_budget(world_dir):
    """A budget the point path fits in and the sphere's witnesses and wall
    sets do not: after the sphere's path what the world holds is back
    within it, and the answers are those of a world with no budget."""
    r = 300.0
    free = regn.load(world_dir / "world.json", max_tiles=8)
    a, b = _pairs(1, seed=3)[0]
    want = _queries(free, [(a, b)], r)
    point = regn.load(world_dir / "world.json", max_tiles=8)
    point.find_path(a, b)
    m = point.memory()
    full = free.memory()
    assert full["parts"]["clearance"]["own"] > 0
    budget = m["own"] + m["mapped"] + full["parts"]["clearance"]["own"] // 3
    assert budget < full["own"] + full["mapped"]
    w = regn.load(world_dir / "world.json", max_tiles=8, max_bytes=budget)
    w.find_path(a, b)
    assert w.loaded == point.loaded                        # the point path fits: nothing went
    got = _queries(w, [(a, b)], r)
    assert got == want
    held = w.memory()
    assert held["own"] + held["mapped"] <= budget          # back within it, having dropped
    assert len(w.loaded) < len(free.loaded) and len(w._wall_sets) < len(free._wall_sets)
    assert len(w._tile_slots.used) < len(free._tile_slots.used)
    # room for every tile and slot the queries hold, not for their witnesses too
    parts = full["parts"]
    budget = sum(parts[p]["own"] + parts[p]["mapped"] for p in ("tile", "slot")) \
        + parts["clearance"]["own"] // 2
    w = regn.load(world_dir / "world.json", max_tiles=8, max_bytes=budget)
    assert _queries(w, [(a, b)], r) == want
    held = w.memory()
    assert held["own"] + held["mapped"] <= budget < full["own"] + full["mapped"]
    assert held["parts"]["clearance"]["own"] > 0
