"""``regn.generate(..., tiles=...)``: a world through the same code path as
``regn.world.build`` and ``regn build -o DIR/world.json``; and the world's
detail going to the rocks' shells (a coarse lattice in the tiles)."""

import json

import numpy as np
import pytest

import regn
from regn.builder.obstacles import random_asteroid_field
from regn.cli import main
from regn.errors import BuildError
from regn.world.world import World

H = 10_000.0
BOX = ((-H,) * 3, (H,) * 3)


def _rocks():
    return random_asteroid_field(6, seed=4, half_extent=H)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A 2x2x1 world of 10 x 10 x 20 km tiles at detail 8 (2 s; its 2x2x2 of
    10 km cubes took 10)."""
    d = tmp_path_factory.mktemp("gen")
    world = regn.generate(BOX, _rocks(), tiles=(H, H, 2 * H), detail=8.0,
                          out=str(d / "world.json"), workers=1, coverage_samples=20_000)
    return d, world


def test_generate_with_tiles_returns_the_loaded_world(built):
    _, world = built
    assert isinstance(world, World)
    assert world.manifest.grid == (2, 2, 1) and world.n_tiles == 4
    rep = world.manifest.build
    assert rep["coverage"] > 0.99             # the rocks' shells at detail 8
    assert {t["detail"] for t in rep["per_tile"]} == {8.0}
    assert {t["lattice_detail"] for t in rep["per_tile"]} == {2.0}
    p = world.find_path((-8e3, -8e3, -8e3), (8e3, 8e3, 7.5e3))
    assert p.status == "ok" and len(p.tiles) >= 2


def test_same_tiles_as_the_cli(tmp_path, capsys):
    """generate(tiles=) and `regn build -o world.json` give the same tiles,
    byte for byte (one code path): the 2x2x2 world at a low detail, so each
    build is a few seconds."""
    world = regn.generate(BOX, _rocks(), tiles=H, detail=0.5, out=str(tmp_path / "world.json"),
                          workers=1, coverage_samples=2000)
    assert world.n_tiles == 8 and len(world.manifest.links) == 12
    spheres = tmp_path / "rocks.csv"
    rows = [",".join(repr(float(v)) for v in (*r.centre, r.radius)) for r in _rocks()]
    spheres.write_text("x,y,z,radius\n" + "\n".join(rows) + "\n")
    out = tmp_path / "cli" / "world.json"
    assert main(["build", "--box", *map(str, BOX[0] + BOX[1]), "--spheres", str(spheres),
                 "--tile-size", str(H), "--detail", "0.5", "--workers", "1",
                 "--coverage-samples", "2000", "-o", str(out), "--json"]) == 0
    capsys.readouterr()
    a = json.loads((tmp_path / "world.json").read_text())
    b = json.loads(out.read_text())
    assert [t["sha256"] for t in a["tiles"]] == [t["sha256"] for t in b["tiles"]]


def test_world_options_need_tiles(tmp_path):
    with pytest.raises(BuildError, match="tiles="):
        regn.generate(BOX, _rocks(), out=str(tmp_path / "w.json"))
    with pytest.raises(BuildError, match="out="):
        regn.generate(BOX, _rocks(), tiles="auto")


def test_without_tiles_still_one_mesh():
    m = regn.generate(BOX, _rocks(), coverage_samples=0)
    assert isinstance(m, regn.Mesh) and m.n_faces <= 65535
    assert np.isfinite(m.build_report["detail"])


def test_awkward_tile_planes_keep_every_tile_box(tmp_path):
    """Three tiles across 20 km (planes at -3333.33 and 3333.33, not float32
    round): each tile's REGN box is its manifest box, and every tile passes
    verify --strict (the first version's 7 x 7 x 7 world moved 218 tile
    boxes by one float32 step, to fit their grid frames)."""
    from regn.world import verify_world
    box = ((-10_000.0, -3_000.0, -3_000.0), (10_000.0, 3_000.0, 3_000.0))
    rocks = random_asteroid_field(4, seed=5, half_extent=(10_000.0, 3_000.0, 3_000.0))
    world = regn.generate(box, rocks, tiles=20_000.0 / 3, detail=4.0,
                          out=str(tmp_path / "world.json"), workers=1, coverage_samples=0)
    assert world.manifest.grid == (3, 1, 1)
    rep = verify_world(tmp_path / "world.json", strict=True)
    assert rep.ok, [t["problem"] for t in rep.tiles if not t["ok"]]
