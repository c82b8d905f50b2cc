"""Worlds of tiles (regn.world): manifest, tiled build, queries across tiles, CLI.

One small world is built once (a 40 km cube, 12 asteroids, 2x2x2 tiles of
20 km) and shared; the tests that change a manifest work on copies."""

import io
import json
import os
import shutil

import numpy as np
import pytest

import regn
from conftest import FIELD_WORLD_BOX, FIELD_WORLD_H, field_world_rocks, one_error_line
from regn.builder.obstacles import random_asteroid_field
from regn.cli import main
from regn.errors import FormatError
from regn.world import build as build_world
from regn.world.links import wall_faces
from regn.world.manifest import read_manifest

H = FIELD_WORLD_H
BOX = FIELD_WORLD_BOX
_field = field_world_rocks


@pytest.fixture(scope="module")
def world_dir(field_world):
    return field_world


@pytest.fixture()
def copy(world_dir, tmp_path):
    """A copy of the world to spoil."""
    d = tmp_path / "w"
    shutil.copytree(world_dir, d)
    return d


def _edit(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# --- manifest ------------------------------------------------------------------
def test_manifest_round_trip(world_dir):
    m = read_manifest(world_dir / "world.json")
    assert m.grid == (2, 2, 2) and len(m.tiles) == 8
    assert len(m.links) == 12            # 3 axes x 4 tile pairs
    again = json.loads(m.dumps())
    assert again == json.loads((world_dir / "world.json").read_text())
    for t in m.tiles:
        assert (world_dir / t.file).exists()
        assert np.all(t.hi - t.lo == H)


@pytest.mark.parametrize("spoil, entry", [
    (lambda d: os.remove(d / "world_1_0_0.rgn"), "tiles[4] (id 1_0_0"),
    (lambda d: (d / "world_0_1_0.rgn").write_bytes(
        (d / "world_0_0_0.rgn").read_bytes()), "tiles[2] (id 0_1_0"),
])
def test_missing_or_changed_tile_is_named(copy, spoil, entry):
    spoil(copy)
    world = regn.load(copy / "world.json")
    with pytest.raises(FormatError, match=r"tiles\[\d\] \(id") as e:
        for i in range(world.n_tiles):
            world.tile(i)
    assert entry in str(e.value)
    assert "missing" in str(e.value) or "bytes" in str(e.value) or "sha256" in str(e.value)


def test_sha_mismatch_same_size(copy):
    p = copy / "world_0_0_1.rgn"
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(bytes(data))
    world = regn.load(copy / "world.json")
    with pytest.raises(FormatError, match=r"tiles\[1\] \(id 0_0_1.*sha256"):
        world.tile(1)


def test_overlapping_boxes_are_named(copy):
    def change(doc):
        doc["tiles"][7]["box"][0][0] -= 1000.0
    _edit(copy / "world.json", change)
    with pytest.raises(FormatError, match=r"tiles\[\d\] \(id .*\)\.box.*overlaps tiles\[\d\]"):
        regn.load(copy / "world.json")


def test_bad_link_is_named(copy):
    def far(doc):
        doc["links"][0]["b"] = doc["tiles"][7]["id"]
    _edit(copy / "world.json", far)
    with pytest.raises(FormatError, match=r"links\[0\].*do not touch"):
        regn.load(copy / "world.json")


def test_link_to_missing_face_is_named(copy):
    def big(doc):
        doc["links"][2]["faces"][5][1] = 10 ** 7
    _edit(copy / "world.json", big)
    with pytest.raises(FormatError, match=r"links\[2\]\.faces\[5\]: face 10000000"):
        regn.load(copy / "world.json")


def test_not_a_manifest(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    with pytest.raises(FormatError, match="not a regn world manifest"):
        regn.load(p)


# --- the tiles' walls match ------------------------------------------------------
def test_shared_walls_are_the_same_triangles(world_dir):
    world = regn.load(world_dir / "world.json")
    m = world.manifest
    for lk in m.links:
        fa, ka = wall_faces(world.tile(lk.a), lk.axis, lk.plane)
        fb, kb = wall_faces(world.tile(lk.b), lk.axis, lk.plane)
        sa = {r.tobytes() for r in ka}
        sb = {r.tobytes() for r in kb}
        # both tiles triangulate the wall alike: nearly every triangle is on
        # both sides (the rest: cut away on one side, inside a rock or cleaned)
        assert len(sa & sb) >= 0.9 * max(len(sa), len(sb))
        assert len(lk.faces) == len(sa & sb)
        va = world.tile(lk.a).vertices[world.tile(lk.a).face_vertices[lk.faces[:, 0]]]
        vb = world.tile(lk.b).vertices[world.tile(lk.b).face_vertices[lk.faces[:, 1]]]
        assert np.array_equal(np.sort(va.sum(axis=1), axis=0), np.sort(vb.sum(axis=1), axis=0))
        assert np.all(va[:, :, lk.axis] == lk.plane)


def test_every_tile_passes_verify_strict(world_dir):
    m = read_manifest(world_dir / "world.json")
    for t in m.tiles:
        assert regn.verify(str(world_dir / t.file), strict=True).ok


# --- queries ----------------------------------------------------------------------
def test_locate_across_tiles(world_dir):
    world = regn.load(world_dir / "world.json")
    pts = np.array([[-10e3, -10e3, -10e3], [10e3, 10e3, 10e3], [5e3, -5e3, 15e3],
                    [0.0, 3e3, -7e3], [3e5, 0, 0]])
    g = world.locate(pts)
    assert g[-1] == -1
    tile, tet = world.split_tets(g[:-1])
    for p, t, k in zip(pts, tile, tet):
        mesh = world.tile(t)
        assert np.all(p >= mesh.bbox_min) and np.all(p <= mesh.bbox_max)
        assert k == mesh.locate(p[None])[0] or mesh.locate(p[None])[0] == -1




def test_cross_tile_paths_match_one_regn(world_dir, field_single):
    """The same field as one REGN (at detail 4, as fine as the tiles): the
    same reachability, and paths of the same length. A REGN's own smoothing
    keeps to its search corridor, which runs up to a few percent longer
    than a visible straight line, so the REGN's path is made taut the way
    the world's is (route.straighten); what is left is where the two meshes
    differ around a rock."""
    from regn.world.route import straighten
    world = regn.load(world_dir / "world.json")
    single = field_single
    rng = np.random.default_rng(7)
    ends = rng.uniform(-0.95 * H, 0.95 * H, (40, 2, 3))
    diff, crossing = [], 0
    for a, b in ends:
        if world.locate([a])[0] < 0 or world.locate([b])[0] < 0 or \
                single.locate([a])[0] < 0 or single.locate([b])[0] < 0:
            continue
        p, q = world.find_path(a, b), single.find_path(a, b)
        assert p.found == q.found
        if p.found:
            taut = straighten(single, q.points)
            length = np.linalg.norm(np.diff(taut, axis=0), axis=1).sum()
            diff.append(abs(p.length - length) / length)
            assert np.allclose(p.points[0], a) and np.allclose(p.points[-1], b)
            crossing += len(p.tiles) > 1
    diff = np.array(diff)
    assert len(diff) >= 20 and crossing >= 15
    assert np.median(diff) <= 0.005
    assert np.mean(diff <= 0.01) >= 0.9
    assert diff.max() <= 0.03


def test_path_crosses_walls_through_links(world_dir):
    world = regn.load(world_dir / "world.json")
    a, b = np.array([-15e3, -14e3, -13e3]), np.array([15e3, 14e3, 13.5e3])
    p = world.find_path(a, b)
    assert p.found and len(p.tiles) >= 2
    # every segment is clear in the world
    assert world.line_of_sight(p.points[:-1], p.points[1:]).all()
    assert p.length >= np.linalg.norm(b - a) - 1e-6


def test_outside_the_world(world_dir):
    world = regn.load(world_dir / "world.json")
    assert world.find_path((3e5, 0, 0), (0, 0, 0)).status == "start_outside"
    assert world.find_path((0, 0, 1e3), (0, 0, 9e5)).status == "goal_outside"


def test_lru_keeps_at_most_max_tiles(world_dir):
    world = regn.load(world_dir / "world.json", max_tiles=2)
    rng = np.random.default_rng(1)
    for a, b in rng.uniform(-0.9 * H, 0.9 * H, (6, 2, 3)):
        world.find_path(a, b)
        assert len(world.loaded) <= 2
    assert world.tiles_read > 2


def test_raycast_goes_on_through_linked_faces(world_dir, field_single):
    world = regn.load(world_dir / "world.json")
    single = field_single
    rng = np.random.default_rng(3)
    agree = total = 0
    for a, b in rng.uniform(-0.95 * H, 0.95 * H, (30, 2, 3)):
        if world.locate([a])[0] < 0 or single.locate([a])[0] < 0:
            continue
        r, s = world.raycast(a, b), single.raycast(a, b)
        total += 1
        agree += r.clear == s.clear
        if r.status == "hit":
            assert np.linalg.norm(r.point - a) <= np.linalg.norm(b - a) + 1e-6
    assert total >= 15 and agree >= 0.85 * total


def test_distance_to_wall_ignores_links(world_dir):
    world = regn.load(world_dir / "world.json")
    # a point right by a shared wall, far from any rock: the wall is not a wall
    d = world.distance_to_wall([[1.0, 1.0, 1.0]])
    mesh_d = world.tile(world.tile_at([[1.0, 1.0, 1.0]])[0]).distance_to_wall([[1.0, 1.0, 1.0]])
    assert mesh_d[0] < 2.0 and d[0] > 100.0


# --- builds on workers and a dask cluster --------------------------------------------
def _world_bytes(manifest):
    """A built world as bytes: its manifest without the build report (times),
    and every file beside it (tiles and their .query files)."""
    d = os.path.dirname(os.path.abspath(manifest.path))
    doc = json.loads(manifest.dumps())
    doc.pop("build")
    return doc, {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))
                 if not f.endswith(".json")}


def test_workers_and_a_dask_cluster_build_the_same_world(tmp_path):
    """In this process, on 2 local workers (which write the files themselves)
    and on a dask cluster (whose bytes this process writes): the same
    manifest, tiles, links, node tables and .query files."""
    distributed = pytest.importorskip("distributed")
    box = ((-H, -H / 2, -H / 2), (H, H / 2, H / 2))
    field = random_asteroid_field(4, seed=5, half_extent=H / 2)
    small = {"tile_size": H, "coverage_samples": 0, "detail": 0.25}   # (what is built)
    one = build_world(box, field, out=str(tmp_path / "one" / "w.json"), workers=1, **small)
    a = build_world(box, field, out=str(tmp_path / "a" / "w.json"), workers=2, **small)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        b = build_world(box, field, out=str(tmp_path / "b" / "w.json"), client=client, **small)
    assert [t.sha256 for t in a.tiles] == [t.sha256 for t in b.tiles]
    assert [lk.faces.tolist() for lk in a.links] == [lk.faces.tolist() for lk in b.links]
    doc, files = _world_bytes(one)
    assert len(files) == 4 and len(doc["links"]) == 1 and len(doc["nodes"]) > 0
    assert _world_bytes(a) == (doc, files)
    assert _world_bytes(b) == (doc, files)


def _worker_start():
    """(numba imported, the pool's preload run, the threads numba starts,
    process id) as a pool worker finds itself on its first task."""
    import sys

    import numba

    from regn.world.tiles import PRELOAD
    return ("numba" in sys.modules, PRELOAD in sys.modules, numba.config.NUMBA_NUM_THREADS,
            os.getpid())


def test_build_workers_start_with_numba_set_up():
    """Local build workers (one thread each: a worker per core) are forked
    from a server that has imported numba for one thread and set up its CPU
    target once, not started as fresh interpreters that each pay for it
    again; the later pools of a process reuse the server. Workers of more
    threads are spawned, numba imported for their count."""
    import multiprocessing

    from regn.world.tiles import executor, pool_context
    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver here: workers are spawned")
    assert pool_context().get_start_method() == "forkserver"
    assert pool_context(threads=2).get_start_method() == "spawn"
    env = os.environ.get("NUMBA_NUM_THREADS")
    for _ in range(2):
        ex, _owned = executor(workers=2, threads=1)
        try:
            got = [ex.submit(_worker_start).result() for _ in range(2)]
        finally:
            ex.shutdown()
        assert all(numba and preloaded and count == 1 for numba, preloaded, count, _ in got), got
        assert all(pid != os.getpid() for *_, pid in got)
    assert os.environ.get("NUMBA_NUM_THREADS") == env           # this process's untouched
    ex, _owned = executor(workers=1, threads=2)
    try:
        numba, preloaded, count, _ = ex.submit(_worker_start).result()
    finally:
        ex.shutdown()
    assert numba and not preloaded and count == 2


def test_a_script_without_a_main_guard_is_told_what_to_do(tmp_path):
    """Workers run a script's top level again: a world built there, outside
    ``if __name__ == "__main__":``, breaks the pool. The error says so."""
    import subprocess
    import sys
    script = tmp_path / "build_it.py"
    script.write_text(
        "import regn\n"
        "from regn.builder.obstacles import random_asteroid_field\n"
        "h = 8000.0\n"
        "regn.generate(((-h,) * 3, (h,) * 3), random_asteroid_field(3, seed=1, half_extent=h),\n"
        f"              tiles='auto', out={str(tmp_path / 'w' / 'world.json')!r}, force=True,\n"
        "              coverage_samples=0, detail=0.25, workers=2)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode != 0 and last.startswith("regn.errors.BuildError: ")
    assert 'if __name__ == "__main__":' in last and "workers=1" in last


def test_a_world_of_one_tile_gets_its_query_file(tmp_path):
    """A tile without neighbours still gets its node table (empty) and its
    .query file."""
    h = 5000.0
    m = build_world(((-h,) * 3, (h,) * 3), random_asteroid_field(3, seed=1, half_extent=h),
                    out=str(tmp_path / "w.json"), tile_size=2 * h, workers=1,
                    coverage_samples=0)
    assert m.grid == (1, 1, 1) and not m.links and m.tiles[0].node_costs.shape == (0, 0)
    assert sorted(os.listdir(tmp_path)) == ["w.json", "w_0_0_0.query", "w_0_0_0.rgn"]
    world = regn.load(tmp_path / "w.json")
    assert repr(world) == (f"<regn.World {str(tmp_path / 'w.json')!r}: 1 tile 1x1x1, "
                           f"{m.tiles[0].tets} tetrahedra, 0 links; no tiles in memory "
                           "(max_tiles=8)>")


def test_existing_output_is_refused(world_dir):
    with pytest.raises(regn.RegnError, match="exists"):
        build_world(BOX, _field(), out=str(world_dir / "world.json"), tile_size=H, workers=1)


# --- the command line ------------------------------------------------------------------
def test_cli_info_verify_path_on_a_manifest(world_dir, capsys):
    m = str(world_dir / "world.json")
    assert main(["info", m]) == 0
    out = capsys.readouterr().out
    assert "8 tiles" in out
    assert main(["verify", m, "--strict"]) == 0
    out = capsys.readouterr().out
    assert "12 links" in out
    assert main(["path", m, "-15000", "-14000", "-13000", "15000", "14000", "13500",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "ok" and doc["length"] > 45_000


def test_cli_verify_names_a_changed_tile(copy, capsys):
    p = copy / "world_1_1_1.rgn"
    data = bytearray(p.read_bytes())
    data[200] ^= 0xFF
    p.write_bytes(bytes(data))
    assert main(["verify", str(copy / "world.json")]) != 0
    err = capsys.readouterr()
    assert "1_1_1" in err.out + err.err


def test_cli_verify_a_truncated_tile_is_unreadable_input(copy, capsys):
    """A tile cut short cannot be read: exit 2 and one ``regn:`` line naming
    the tile's file (as verify gives a map it cannot read); a tile that reads
    but was changed fails the world: exit 1."""
    p = copy / "world_0_1_1.rgn"
    whole = p.read_bytes()
    p.write_bytes(whole[:len(whole) // 2])
    code = main(["verify", str(copy / "world.json")])
    one_error_line(capsys, code, "tiles[3]", "world_0_1_1.rgn", "truncated")
    assert main(["verify", str(copy / "world.json"), "--json"]) == 2
    rows = json.loads(capsys.readouterr().out)["files"][0]["tiles"]
    assert [r["readable"] for r in rows] == [True] * 3 + [False] + [True] * 4
    changed = bytearray(whole)
    changed[300] ^= 0xFF
    p.write_bytes(bytes(changed))
    assert main(["verify", str(copy / "world.json")]) == 1
    out = capsys.readouterr()
    assert "world_0_1_1.rgn): sha256 does not match" in out.out and out.err == ""


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_cli_verify_of_a_world_shows_each_tile_at_a_terminal(world_dir, monkeypatch, capsys):
    import regn.cli._progress as progress
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["verify", str(world_dir / "world.json"), "--strict"]) == 0
    shown = terminal.getvalue()
    assert "tile 1 of 8" in shown and "tile 8 of 8" in shown and "links" in shown
    assert shown.endswith("\r")                          # the line wiped at the end
    terminal.seek(0)
    terminal.truncate()
    assert main(["verify", str(world_dir / "world.json"), "--json"]) == 0
    assert terminal.getvalue() == ""


def test_cli_build_writes_a_world_and_refuses_to_overwrite(tmp_path, capsys):
    out = str(tmp_path / "w" / "world.json")
    args = ["build", "--asteroids", "3", "--seed", "2", "--half-extent", "10000",
            "--tile-size", "10000", "--workers", "1", "--coverage-samples", "0", "--detail",
            "0.25", "-o", out]
    assert main(args) == 0
    assert "8 tiles 2x2x2" in capsys.readouterr().out
    assert main(args) == 2
    # the words of every command's refusal
    assert capsys.readouterr().err == f"regn: {out}: exists; pass --force to overwrite it\n"
    assert main(["raycast", out, "-9000", "-8000", "-7000", "9000", "8500", "7500"]) in (0, 1)
    assert capsys.readouterr().out.startswith("status ")
    assert main(["locate", out, "--points", _points(tmp_path)]) == 0
    assert len(capsys.readouterr().out.split()) == 2


def test_cli_rebuild_with_force_leaves_none_of_the_old_tiles(tmp_path, capsys):
    """A world rebuilt over another with --force and larger tiles: the old
    world's tiles it does not use are gone, every other file of the folder
    stays, and a rebuild that fails removes nothing."""
    out = tmp_path / "w" / "world.json"
    args = ["build", "--asteroids", "3", "--seed", "2", "--half-extent", "10000",
            "--workers", "1", "--coverage-samples", "0", "--detail", "0.25", "-o", str(out)]
    assert main(args + ["--tile-size", "10000"]) == 0
    capsys.readouterr()
    old = sorted(os.listdir(out.parent))
    assert len(old) == 17
    (out.parent / "notes.txt").write_text("mine")
    (out.parent / "world_9_9_9.rgn").write_text("not the world's")
    assert main(args + ["--tile-size", "1", "--force"]) == 2        # too many tiles
    assert "tiles" in capsys.readouterr().err
    assert sorted(os.listdir(out.parent)) == sorted(old + ["notes.txt", "world_9_9_9.rgn"])
    assert main(args + ["--tile-size", "20000", "--force"]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"wrote {out} and 1 tile 1x1x1\n")
    assert "removed 14 files of the world it replaced" in said
    assert sorted(os.listdir(out.parent)) == ["notes.txt", "world.json", "world_0_0_0.query",
                                             "world_0_0_0.rgn", "world_9_9_9.rgn"]
    assert main(["verify", str(out), "--strict"]) == 0


def test_cli_world_into_a_missing_folder(tmp_path, capsys):
    """A world's own folder is made (a world is a folder of files), and the
    report says so; a folder whose parent is missing is refused as every
    command refuses a missing folder, and nothing is made."""
    args = ["build", "--asteroids", "2", "--seed", "2", "--half-extent", "5000",
            "--workers", "1", "--coverage-samples", "0", "--detail", "0.25", "--tile-size",
            "10000", "-o"]
    deep = tmp_path / "no" / "such" / "world.json"
    assert main(args + [str(deep)]) == 2
    assert capsys.readouterr().err == \
        f"regn: {deep}: cannot write: directory {tmp_path / 'no'} does not exist\n"
    assert main(["build", "--asteroids", "2", "-o", str(tmp_path / "no" / "a.rgn")]) == 2
    assert capsys.readouterr().err == \
        f"regn: {tmp_path / 'no' / 'a.rgn'}: cannot write: directory {tmp_path / 'no'} " \
        "does not exist\n"
    assert os.listdir(tmp_path) == []
    out = tmp_path / "w" / "world.json"
    assert main(args + [str(out)]) == 0
    assert capsys.readouterr().out.startswith(
        f"wrote {out} and 1 tile 1x1x1 (made the folder {tmp_path / 'w'})\n")


def _points(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text("1,2,3\n-5000,4000,-3000\n")
    return str(p)


# --- prepared tiles, and the commands that take a manifest ------------------------------
def test_tiles_keep_their_query_structures_beside_them(world_dir, copy):
    """The build writes each tile's query structures beside it; a world
    reading them answers exactly as one building its own, and a file that
    belongs to another tile (its sha256 stamp) is refused."""
    from regn.world.prepared import install, sidecar_path
    m = read_manifest(world_dir / "world.json")
    for i in range(len(m.tiles)):
        assert os.path.exists(sidecar_path(m, i))
    for f in copy.glob("*.query"):
        f.unlink()
    plain, kept = regn.load(copy / "world.json"), regn.load(world_dir / "world.json")
    rng = np.random.default_rng(11)
    for a, b in rng.uniform(-0.9 * H, 0.9 * H, (8, 2, 3)):
        p, q = kept.find_path(a, b), plain.find_path(a, b)
        assert p.status == q.status
        if p.found:
            assert np.array_equal(p.points, q.points) and p.tiles == q.tiles
    shutil.copy(sidecar_path(m, 0), copy / "world_0_0_1.query")
    cm = read_manifest(copy / "world.json")
    with pytest.raises(FormatError, match="made for another tile"):
        install(cm, 1, regn.load(copy / "world.json").tile(1, prepared=False))
    assert install(m, 0, regn.load(world_dir / "world.json").tile(0, prepared=False))


def test_cli_field_and_raycasts_on_a_manifest(world_dir, tmp_path, capsys, monkeypatch):
    m = str(world_dir / "world.json")
    pts = tmp_path / "p.txt"
    pts.write_text("-15000 -14000 -13000\n15000 14000 13000\n3e5 0 0\n")
    assert main(["field", m, "15000", "14000", "13500", "--points", str(pts), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "ok" and doc["goal_tet"] >= 0
    far, near, out = doc["cost_at"]
    assert far > 40_000 and 0 < near < 1_000 and out >= 1e300      # inf as JSON: 1e308
    assert np.allclose(doc["waypoints"][1], [15000, 14000, 13500])  # in sight: the goal
    assert main(["field", m, "15000", "14000", "13500"]) == 2      # every tet: refused
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and len(err.strip().splitlines()) == 1 and "--points" in err
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(
        "-9000 -8000 -7000 9000 8500 7500\n1 1 1 2 2 2\n3e5 0 0 0 0 0\n"))
    assert main(["raycasts", m, "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert [h["status"] for h in hits][1:] == ["clear", "start_outside"]
    world = regn.load(m)
    assert hits[0]["clear"] == world.raycast((-9000, -8000, -7000), (9000, 8500, 7500)).clear
    assert main(["path", m, "0", "0", "0", "1", "1", "1", "--block-sphere", "0", "0", "0",
                 "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("regn: ") and "world" in err and "Traceback" not in err


def test_cli_export_render_view_a_manifest(world_dir, tmp_path, capsys):
    m = str(world_dir / "world.json")
    out = str(tmp_path / "w.vtu")
    assert main(["export", m, out]) == 0
    import meshio
    got = meshio.read(out)
    world = regn.load(m)
    assert len(got.cells[0].data) == world.n_tets                 # every tile's tetrahedra
    assert sorted(set(got.cell_data["tile"][0].tolist())) == list(range(8))
    assert np.allclose(got.points.min(axis=0), -H) and np.allclose(got.points.max(axis=0), H)
    assert main(["export", m, str(tmp_path / "w.obj")]) == 2      # not for a world
    assert "world" in capsys.readouterr().err
    png, page = str(tmp_path / "w.png"), str(tmp_path / "w.html")
    ends = ["-15000", "-14000", "-13000", "15000", "14000", "13500"]
    assert main(["render", m, "-o", png, "--path", *ends]) == 0
    assert "8 tiles" in capsys.readouterr().out
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["view", m, "-o", page, "--path", *ends]) == 0
    text = (tmp_path / "w.html").read_text()
    assert "plotly" in text and '"name":"tiles"' in text.replace(" ", "")
    assert main(["render", m, "-o", str(tmp_path / "s.png"), "--slice", "z=0"]) == 2
    assert capsys.readouterr().err.startswith("regn: render: ")


def test_serve_answers_on_a_world(world_dir):
    from regn.cli.serve_cmd import Service
    s = Service(regn.load(world_dir / "world.json"))
    s.warm_up()
    ask = lambda **req: json.loads(s.answer(json.dumps({"id": 1, **req})))
    p = ask(query="path", start=[-15e3, -14e3, -13e3], goal=[15e3, 14e3, 13.5e3])
    assert p["status"] == "ok" and p["length"] > 45_000
    assert ask(query="locate", points=[[3e5, 0, 0]])["result"] == [-1]
    f = ask(query="field", goal=[15e3, 14e3, 13.5e3], points=[[-15e3, -14e3, -13e3]])
    assert f["cost_at"][0] == pytest.approx(p["cost"], rel=0.05)
    assert "error" in ask(query="field", goal=[0, 0, 0])           # every tet: refused
    assert "world" in ask(query="clearance", points=[[1, 1, 1]], wall=True)["error"]
    assert ask(query="clearance", points=[[1, 1, 1]])["result"][0] > 100
    assert "world" in ask(query="crowd_add", positions=[[1, 1, 1]], radius=1,
                          max_speed=1)["error"]


def test_regn_world_build_stays_the_function_once_its_module_is_imported():
    """``regn.world.build(...)`` is a function, also after the module that
    defines it was imported (regn.generate with tiles imports it): a package
    attribute named as a submodule would be replaced by that module."""
    import subprocess
    import sys
    code = ("import importlib, pkgutil, regn.world as w; "
            "[importlib.import_module(m.name) for m in pkgutil.iter_modules(w.__path__, "
            "'regn.world.')]; from regn.world import build; "
            "print(callable(build) and w.build is build)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "True"
