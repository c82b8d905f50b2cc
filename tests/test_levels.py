"""Levels as users have them (regn.levels): triangle soups with every defect
and voxel grids, built safely. Every safety check samples points in every
stored tetrahedron and tests them against the INPUT (analytic boxes, sheets
and balls), never against the builder's voxels."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import regn
from regn.errors import BuildError
from regn.levels import (
    Soup,
    build_level,
    generate_level,
    read_soup,
    read_voxels,
    voxels_from_array,
)
from regn.levels.repairs import soup_repairs

SRC = Path(__file__).resolve().parents[1] / "src"
#: The safety promise's tolerance (metres).
TOL = 0.01
#: Small working grids keep the tests fast.
VOX = 32 ** 3

# --- inputs with known answers ------------------------------------------------------------

_QUADS = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]


def box_soup(lo, hi):
    """(verts, quads) of a closed box, faces outward."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    v = np.array([[(hi if (c >> 2) & 1 else lo)[0], (hi if (c >> 1) & 1 else lo)[1],
                   (hi if c & 1 else lo)[2]] for c in range(8)])
    return v, [list(q)[::-1] for q in _QUADS]


def tris_of(quads):
    return np.array([t for q in quads for t in ([q[0], q[1], q[2]], [q[0], q[2], q[3]])])


def soup_of(parts):
    verts, tris, base = [], [], 0
    for v, f in parts:
        verts.append(np.asarray(v, float))
        tris.append(np.asarray(f) + base)
        base += len(v)
    return Soup(np.concatenate(verts), np.concatenate(tris).astype(np.int64), "test")


def box_part(lo, hi):
    v, q = box_soup(lo, hi)
    return v, tris_of(q)


def sheet_part(z, lo=(-1, -1), hi=(11, 11)):
    v = np.array([[lo[0], lo[1], z], [hi[0], lo[1], z], [hi[0], hi[1], z], [lo[0], hi[1], z]])
    return v, np.array([[0, 1, 2], [0, 2, 3]])


def samples_in_tets(mesh, per=24, seed=0):
    """Points in every stored tetrahedron: its corners, centroid and ``per``
    random barycentric points."""
    tp = mesh.tet_points.astype(np.float64)
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(4), size=(len(tp), per))
    inner = np.einsum("tpk,tkd->tpd", w, tp)
    return np.concatenate([tp, tp.mean(axis=1, keepdims=True), inner], axis=1).reshape(-1, 3)


def depth_in_boxes(p, boxes):
    """How deep each point is inside the union of boxes (<= 0 outside)."""
    d = np.full(len(p), -np.inf)
    for lo, hi in boxes:
        inside = np.minimum(p - np.asarray(lo), np.asarray(hi) - p).min(axis=1)
        d = np.maximum(d, inside)
    return d


def distance_to_boxes(p, boxes):
    d = np.full(len(p), np.inf)
    for lo, hi in boxes:
        q = np.maximum(np.asarray(lo) - p, 0) + np.maximum(p - np.asarray(hi), 0)
        d = np.minimum(d, np.linalg.norm(q, axis=1))
    return d


def assert_clear_of_boxes(mesh, boxes, r):
    p = samples_in_tets(mesh)
    assert depth_in_boxes(p, boxes).max() <= TOL          # never inside a solid
    assert distance_to_boxes(p, boxes).min() >= r - TOL   # nor nearer than the radius


def build(level, bbox=((-1, -1, -1), (11, 11, 11)), r=0.0, **kw):
    kw.setdefault("max_voxels", VOX)
    kw.setdefault("coverage_samples", 20_000)
    return generate_level(bbox, level, agent_radius=r, **kw)


# --- the solid decision -------------------------------------------------------------------

def test_a_closed_box_is_solid_and_the_rest_is_covered():
    boxes = [((3, 3, 3), (7, 7, 7))]
    mesh = build(soup_of([box_part(*b) for b in boxes]), r=0.5)
    rep = mesh.build_report
    assert_clear_of_boxes(mesh, boxes, 0.5)
    assert rep["cavities"] == 1 and rep["cavities_free"] == 0   # the inside is solid
    assert rep["clearance_ok"] and rep["coverage"] > 0.8
    assert rep["mesh_components"] == 1


def test_flipped_duplicated_degenerate_triangles_do_not_change_the_solid():
    v, t = box_part((3, 3, 3), (7, 7, 7))
    clean = soup_of([(v, t)])
    bad_t = t.copy()
    bad_t[:3] = bad_t[:3, ::-1]                              # three faces flipped
    bad_t = np.concatenate([bad_t, t[:4], [[0, 0, 1], [0, 1, 1]]])  # 4 duplicates, 2 degenerate
    bad = soup_of([(v, bad_t)])
    rep = soup_repairs(bad)
    assert rep["duplicates"] == 4 and rep["degenerate"] == 2 and rep["flipped_faces"] > 0
    assert soup_repairs(clean)["flipped_faces"] == 0
    free_clean = build_level(((-1,) * 3, (11,) * 3), clean, max_voxels=VOX)[2]["_free"][0]
    free_bad = build_level(((-1,) * 3, (11,) * 3), bad, max_voxels=VOX)[2]["_free"][0]
    assert np.array_equal(free_clean, free_bad)


def test_an_open_sheet_is_a_wall_with_free_space_on_both_sides():
    mesh = build(soup_of([sheet_part(5.0)]), r=0.3)
    p = samples_in_tets(mesh)
    assert np.abs(p[:, 2] - 5.0).min() >= 0.3 - TOL          # nothing nearer the sheet
    c = mesh.tet_points.mean(axis=1)
    assert (c[:, 2] < 5).any() and (c[:, 2] > 5).any()       # both sides kept
    assert mesh.build_report["mesh_components"] == 2         # and never joined
    assert mesh.build_report["repairs"]["open_edges"] == 4


def _slabs(gap):
    """A wall across the box at x 4..6 split by a crack of ``gap`` at y = 5."""
    return [((4, -1, -1), (6, 5 - gap / 2, 11)), ((4, 5 + gap / 2, -1), (6, 11, 11))]


def test_a_crack_narrower_than_the_agent_is_closed():
    boxes = _slabs(0.2)
    mesh = build(soup_of([box_part(*b) for b in boxes]), r=0.5)
    assert_clear_of_boxes(mesh, boxes, 0.5)
    assert mesh.build_report["mesh_components"] == 2


def test_a_gap_wider_than_the_agent_is_a_passage():
    boxes = _slabs(4.0)
    mesh = build(soup_of([box_part(*b) for b in boxes]), r=0.5)
    assert_clear_of_boxes(mesh, boxes, 0.5)
    assert mesh.build_report["mesh_components"] == 1


def test_t_junctions_are_counted_and_change_nothing():
    # the top face of a box split into a big triangle pair and two small quads:
    # the small ones' shared corner lies on the big one's edge
    v = [[0, 0, 0], [4, 0, 0], [4, 4, 0], [0, 4, 0], [2, 4, 0], [2, 6, 0], [4, 6, 0],
         [0, 6, 0]]
    t = [[0, 1, 2], [0, 2, 3], [3, 4, 5], [3, 5, 7], [4, 2, 6], [4, 6, 5]]
    rep = soup_repairs(Soup(np.array(v, float), np.array(t), "t"))
    assert rep["t_junctions"] == 1


def test_a_closed_box_facing_inward_is_still_solid():
    v, t = box_part((3, 3, 3), (7, 7, 7))
    mesh = build(soup_of([(v, t[:, ::-1])]), r=0.5, cavities="winding")
    assert_clear_of_boxes(mesh, [((3, 3, 3), (7, 7, 7))], 0.5)
    assert mesh.build_report["cavities_free"] == 0


def _thick_walled_room():
    outer = box_part((1, 1, 1), (9, 9, 9))
    iv, it = box_part((2, 2, 2), (8, 8, 8))
    return soup_of([outer, (iv, it[:, ::-1])])               # the room's walls face in


@functools.lru_cache(maxsize=None)
def _thick_walled_room_solid_cavities_free():
    """What --cavities solid leaves free in :func:`_thick_walled_room` (the
    same for every case below: built once a process)."""
    return build(_thick_walled_room(), r=0.2, cavities="solid").build_report["cavities_free"]


@pytest.mark.parametrize("cavities", ["nested", "winding"])
def test_an_enclosed_room_with_thick_walls_is_air(cavities):
    assert _thick_walled_room_solid_cavities_free() == 0
    mesh = build(_thick_walled_room(), r=0.2, cavities=cavities)
    rep = mesh.build_report
    assert rep["cavities_free"] >= 1
    c = mesh.tet_points.mean(axis=1)
    assert (np.abs(c - 5).max(axis=1) < 2.5).any()           # tetrahedra in the room
    walls = [((1, 1, 1), (9, 9, 2)), ((1, 1, 8), (9, 9, 9)), ((1, 1, 1), (2, 9, 9)),
             ((8, 1, 1), (9, 9, 9)), ((1, 1, 1), (9, 2, 9)), ((1, 8, 1), (9, 9, 9))]
    assert_clear_of_boxes(mesh, walls, 0.2)


# --- walled-in regions: a sealed room, crates, rocks ---------------------------------------

#: An editor's room as the new user's trial had it: ``o Room``, a closed
#: 100 x 100 x 30 m box of quads facing out, and inside it a crate written
#: with negative indices, a hollow crate (a box with a box-shaped hollow, the
#: hollow's faces toward it), a one-sided shelf and a hexagonal pillar with
#: 6-gon caps from floor to ceiling.
ROOM_OBJ = """\
# trial room (metres)
o Room
v 0 0 0
v 0 0 30
v 0 100 0
v 0 100 30
v 100 0 0
v 100 0 30
v 100 100 0
v 100 100 30
{room_faces}
g props
o Crate
v 60 30 0
v 60 30 14
v 60 44 0
v 60 44 14
v 74 30 0
v 74 30 14
v 74 44 0
v 74 44 14
f -8 -7 -5 -6
f -4 -2 -1 -3
f -8 -4 -3 -7
f -6 -5 -1 -2
f -8 -6 -2 -4
f -7 -3 -1 -5
{hollow_crate}
o Shelf
v 40 90 0
v 60 90 0
v 60 90 12
v 40 90 12
f -4 -3 -2 -1
o Pillar
{pillar}
"""
_ROOM_QUADS = ["1 2 4 3", "5 7 8 6", "1 5 6 2", "3 4 8 7", "1 3 7 5", "2 6 8 4"]
#: Points a user would try: the room's air, and the insides of the crate,
#: of the hollow crate's walls, its hollow, and of the pillar.
IN_ROOM, IN_CRATE, IN_CRATE_WALL, IN_HOLLOW, IN_PILLAR = (
    (50, 60, 20), (67, 37, 7), (12.5, 25, 12), (25, 25, 12), (80, 75, 15))


def _obj_box(lo, hi, inward=False):
    """Negative-index OBJ lines of a box of quads (facing out, or in)."""
    v = [f"v {x} {y} {z}" for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    faces = [[int(i) - 9 for i in q.split()] for q in _ROOM_QUADS]
    return v + ["f " + " ".join(map(str, f[::-1] if inward else f)) for f in faces]


def room_obj(room_faces_inward=False, walls=6):
    """The trial's room (:data:`ROOM_OBJ`) with its faces out or in, and
    ``walls`` of its six faces (5: the x = 100 wall left out, an open room)."""
    quads = [q for q in _ROOM_QUADS if q != "5 7 8 6"] if walls == 5 else _ROOM_QUADS
    faces = ["f " + " ".join(q.split()[::-1] if room_faces_inward else q.split()) for q in quads]
    hollow = ["o HollowCrate"] + _obj_box((10, 10, 0), (40, 40, 24)) + \
        _obj_box((16, 16, 6), (34, 34, 18), inward=True)
    ring = [(80 + 6 * np.cos(a), 75 + 6 * np.sin(a)) for a in np.arange(6) * np.pi / 3]
    pillar = [f"v {x:.6f} {y:.6f} {z}" for z in (0, 30) for x, y in ring]
    pillar += ["f " + " ".join(str(-12 + k) for k in range(6)),     # the 6-gon caps
               "f " + " ".join(str(-1 - k) for k in range(6))]
    pillar += [f"f {-12 + k} {-12 + (k + 1) % 6} {-6 + (k + 1) % 6} {-6 + k}" for k in range(6)]
    return ROOM_OBJ.format(room_faces="\n".join(faces), hollow_crate="\n".join(hollow),
                           pillar="\n".join(pillar))


_ROOMS = {}


def build_room(tmp_path, cavities=None, **kw):
    """The trial's room built from its file at a coarse agent and coarse
    blocks (fast), once per variant."""
    key = (cavities, tuple(sorted(kw.items())))
    if key not in _ROOMS:
        (tmp_path / "room.obj").write_text(room_obj(**kw))
        options = {} if cavities is None else {"cavities": cavities}
        _ROOMS[key] = generate_level(None, read_soup(tmp_path / "room.obj"), agent_radius=1.0,
                                     max_voxels=64 ** 3, min_block=4.0, coverage_samples=10_000,
                                     **options)
    return _ROOMS[key]


@pytest.mark.parametrize("inward", [False, True], ids=["faces-out", "faces-in"])
def test_a_sealed_rooms_inside_is_air_and_its_crates_solid(tmp_path, inward):
    """The default rule: the room's air and the hollow in a crate are in
    tetrahedra; the insides of the crates, of the hollow crate's walls and
    of the pillar are not, whichever way the room's faces point."""
    mesh = build_room(tmp_path, room_faces_inward=inward)
    rep = mesh.build_report
    assert rep["cavities_rule"] == "nested" and "cavities_warning" not in rep
    tets = mesh.locate(np.array([IN_ROOM, IN_CRATE, IN_CRATE_WALL, IN_HOLLOW, IN_PILLAR], float))
    assert tets[0] >= 0 and tets[3] >= 0, tets
    assert (tets[[1, 2, 4]] < 0).all(), tets
    assert rep["cavities_free"] == 2                         # the room and the hollow
    assert rep["clearance_ok"]
    # where they are, for a user to find them: one point in each
    pts = np.array(rep["cavities_air_points"])
    in_hollow = np.all((pts > (16, 16, 6)) & (pts < (34, 34, 18)), axis=1)
    in_room = np.all((pts > 0) & (pts < (100, 100, 30)), axis=1)
    assert len(pts) == 2 and in_hollow.sum() == 1 and in_room.all()


def test_a_sealed_room_reads_the_same_whichever_way_its_faces_point(tmp_path):
    out = build_room(tmp_path, room_faces_inward=False)
    inward = build_room(tmp_path, room_faces_inward=True)
    assert np.array_equal(out.tets, inward.tets) and np.array_equal(out.vertices,
                                                                    inward.vertices)


def test_winding_says_so_when_it_makes_a_room_facing_inward_solid(tmp_path):
    """The winding rule reads the faces' direction: a room whose faces point
    inward reads -1 inside and is made solid (the crates' insides free);
    the report says so and names --cavities nested."""
    mesh = build_room(tmp_path, cavities="winding", room_faces_inward=True)
    warning = mesh.build_report["cavities_warning"]
    assert "point inward" in warning and "--cavities nested" in warning
    assert mesh.locate(IN_ROOM) < 0 and mesh.locate(IN_CRATE) >= 0


@pytest.mark.parametrize("inward", [False, True], ids=["faces-out", "faces-in"])
def test_an_open_rooms_crates_are_solid_and_their_hollows_air(tmp_path, inward):
    """A room with a wall left out: its inside reaches the box's boundary and
    is free under every rule; the crates' insides are solid, the hollow in
    a crate air (the missing wall does not change the count)."""
    mesh = build_room(tmp_path, room_faces_inward=inward, walls=5)
    tets = mesh.locate(np.array([IN_ROOM, IN_CRATE, IN_CRATE_WALL, IN_HOLLOW, IN_PILLAR], float))
    assert tets[0] >= 0 and tets[3] >= 0, tets
    assert (tets[[1, 2, 4]] < 0).all(), tets


@pytest.mark.parametrize("inward", [False, True], ids=["faces-out", "faces-in"])
def test_a_closed_rock_in_open_space_stays_solid_and_its_hollow_is_air(inward):
    """Rocks in open space (an asteroid and a hollow one, in the level's own
    bounds, and one alone in a box with room around it): their insides are
    solid, the hollow's inside air."""
    rock = box_part((1, 1, 1), (4, 4, 4))
    ov, ot = box_part((5, 5, 5), (10, 10, 10))
    hv, ht = box_part((6.5, 6.5, 6.5), (8.5, 8.5, 8.5))
    parts = [rock, (ov, ot), (hv, ht[:, ::-1])]
    if inward:
        parts = [(v, t[:, ::-1]) for v, t in parts]
    mesh = generate_level(None, soup_of(parts), agent_radius=0.1, max_voxels=VOX,
                          coverage_samples=10_000)
    assert mesh.build_report["cavities"] >= 3 and mesh.build_report["cavities_free"] == 1
    tets = mesh.locate(np.array([(2.5, 2.5, 2.5), (5.7, 7.5, 7.5), (7.5, 7.5, 7.5)], float))
    assert tets[0] < 0 and tets[1] < 0 and tets[2] >= 0, tets
    alone = build(soup_of(parts[:1]), r=0.1)                  # a box with room around it
    assert alone.build_report["cavities_free"] == 0 and alone.locate((2.5, 2.5, 2.5)) < 0


@pytest.mark.parametrize("inward", [False, True], ids=["faces-out", "faces-in"])
def test_where_two_closed_rocks_overlap_is_solid(inward):
    """Two interpenetrating rocks: their overlap lies inside two shells like
    a hollow, yet it is solid (the winding number tells them apart)."""
    parts = [box_part((1, 1, 1), (6, 6, 6)), box_part((3.5, 3.5, 3.5), (9, 9, 9))]
    if inward:
        parts = [(v, t[:, ::-1]) for v, t in parts]
    mesh = build(soup_of(parts), r=0.1)
    rep = mesh.build_report
    assert rep["cavities"] >= 3 and rep["cavities_free"] == 0 and rep["cavities_overlaps"] == 1
    assert mesh.locate((4.75, 4.75, 4.75)) < 0
    assert_clear_of_boxes(mesh, [((1, 1, 1), (6, 6, 6)), ((3.5, 3.5, 3.5), (9, 9, 9))], 0.1)


def test_a_single_closed_shell_in_its_own_bounds_is_read_as_a_room():
    """The documented edge: a level that is one closed box and nothing else,
    built in its own bounds, has its largest free space inside the box, so
    that is air (a box given with room around it reads it as a rock)."""
    mesh = generate_level(None, soup_of([box_part((1, 1, 1), (9, 9, 9))]), agent_radius=0.1,
                          max_voxels=VOX, coverage_samples=10_000)
    assert mesh.locate((5.0, 5.0, 5.0)) >= 0


def test_spheres_mix_with_a_soup():
    from regn.builder.obstacles import Sphere
    boxes = [((3, 3, 3), (5, 5, 5))]
    level = soup_of([box_part(*b) for b in boxes])
    mesh = regn.generate(((-1,) * 3, (11,) * 3), [Sphere((8, 8, 8), 1.5)], agent_radius=0.25,
                         level=level, max_voxels=VOX, coverage_samples=10_000)
    p = samples_in_tets(mesh)
    assert np.linalg.norm(p - 8, axis=1).min() >= 1.75 - TOL
    assert_clear_of_boxes(mesh, boxes, 0.25)


# --- scale ---------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [100.0, 500_000.0])
def test_a_room_and_a_field_at_scale(size):
    s = size / 10
    boxes = [((2 * s, 2 * s, 0), (4 * s, 8 * s, 6 * s)), ((6 * s, 1 * s, 3 * s),
                                                           (9 * s, 4 * s, 9 * s))]
    level = soup_of([box_part(*b) for b in boxes] + [sheet_part(0.0, (0, 0), (size, size))])
    r = 0.01 * s
    mesh = build(level, bbox=((0, 0, 0), (size,) * 3), r=r)
    assert_clear_of_boxes(mesh, boxes, r)
    p = samples_in_tets(mesh)
    assert p[:, 2].min() >= r - TOL * max(1, size / 1e4)      # the floor sheet
    assert mesh.build_report["coverage"] > 0.6


# --- voxels -------------------------------------------------------------------------------

def _cave():
    occ = np.zeros((16, 12, 10), bool)
    occ[:, :, :2] = True                                     # floor
    occ[5:9, 3:12, :8] = True                                # a pillar wall
    occ[11, 0:6, 2:6] = True
    return occ


def test_voxels_in_both_array_forms_give_the_same_safe_mesh(tmp_path):
    occ = _cave()
    a = voxels_from_array(occ, 2.0, (10, 20, 30))
    b = voxels_from_array(np.argwhere(occ), 2.0, (10, 20, 30))
    bbox = ((10, 20, 30), (42, 44, 50))
    ma = generate_level(bbox, a, coverage_samples=20_000)
    mb = generate_level(bbox, b, coverage_samples=20_000)
    assert np.array_equal(ma.vertices, mb.vertices) and np.array_equal(ma.tets, mb.tets)
    boxes = [(np.array([10, 20, 30]) + 2.0 * ijk, np.array([10, 20, 30]) + 2.0 * (ijk + 1))
             for ijk in np.argwhere(occ)]
    p = samples_in_tets(ma, per=8)
    assert depth_in_boxes(p, boxes).max() <= TOL
    assert ma.build_report["coverage"] > 0.9
    np.save(tmp_path / "occ.npy", occ)
    assert read_voxels(tmp_path / "occ.npy", 2.0).shape == occ.shape


# --- bad files ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n", ["line 3", "finite"]),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", ["line 4", "out of range"]),
    ("", ["empty"]),
    ("v 0 0 0\nv 1 0 0\n", ["no faces"]),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", ["line 4", "at least 3"]),
])
def test_bad_obj_files_name_file_and_line(tmp_path, text, words):
    f = tmp_path / "bad.obj"
    f.write_text(text)
    with pytest.raises(BuildError) as e:
        read_soup(f)
    assert str(f) in str(e.value) and all(w in str(e.value) for w in words)


def test_bad_off_and_voxel_files(tmp_path):
    f = tmp_path / "bad.off"
    f.write_text("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n")
    with pytest.raises(BuildError, match="line 6.*out of range"):
        read_soup(f)
    g = tmp_path / "bad.npy"
    np.save(g, np.zeros((4, 4)))
    with pytest.raises(BuildError, match="bad.npy"):
        read_voxels(g, 1.0)


def test_quads_and_ngons_are_fanned(tmp_path):
    f = tmp_path / "poly.obj"
    f.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 0.5 0\no b\nf 1 2 3 4\n"
                 "f 1/1/1 2/2/2 3/3/3 4/4/4 5/5/5\nf -1 -2 -3\n")
    s = read_soup(f)
    assert len(s.tris) == 2 + 3 + 1 and s.tris.max() == 4
    assert repr(s) == "<Soup 'poly.obj': 5 vertices, 6 triangles, 1 object>"   # not the arrays


def test_the_example_hangar_is_an_editors_level(tmp_path):
    """The demo's hangar.obj: quads and an n-gon in 14 objects, open sheets,
    a crate sunk into a pillar; its repairs name the open edges."""
    from regn.levels.examples import hangar_obj
    f = tmp_path / "hangar.obj"
    f.write_text(hangar_obj())
    text = f.read_text().splitlines()
    assert sum(line.startswith("o ") for line in text) == 14
    assert max(len(line.split()) - 1 for line in text if line.startswith("f ")) == 8
    s = read_soup(f)
    rep = soup_repairs(s)
    assert rep["open_edges"] > 0 and rep["degenerate"] == 0
    assert s.verts.min(axis=0).tolist() == [0, 0, 0] and s.verts.max(axis=0).tolist() == [100, 60, 20]


def test_the_hangars_crate_sunk_into_a_pillar_stays_solid(tmp_path):
    """Where the demo hangar's crate is sunk into a pillar is inside two
    closed solids, like a hollow in one, among open sheets that shift the
    winding number by about 1/2: the nesting rule keeps it solid."""
    from regn.levels.build import level_solid
    from regn.levels.examples import hangar_obj
    (tmp_path / "hangar.obj").write_text(hangar_obj())
    soup = read_soup(tmp_path / "hangar.obj")
    free, grid, rep = level_solid(None, soup, max_voxels=2 ** 21)
    air = level_solid(None, soup, max_voxels=2 ** 21, cavities="air")[0]
    ijk = tuple(np.floor((np.array([40, 29.25, 1.5]) - grid.lo) / grid.h).astype(int))
    assert air[ijk] == 1 and free[ijk] == 0               # free space there, made solid
    assert rep["cavities_overlaps"] == 1 and rep["cavities_free"] == 0


def test_the_example_caves_are_one_connected_system():
    from scipy import ndimage

    from regn.levels.examples import cave_voxels
    occ = cave_voxels(seed=1)
    labels, n = ndimage.label(~occ)
    assert n == 1 and 0.03 < (~occ).mean() < 0.2
    assert np.array_equal(occ, cave_voxels(seed=1)) and not np.array_equal(occ, cave_voxels(seed=2))


# --- the CLI ------------------------------------------------------------------------------

def _cli(*args):
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "regn", *map(str, args)], capture_output=True,
                          check=False, text=True, env=env, timeout=300)


def _main(capsys, *args):
    """(exit status, stdout, stderr) of a CLI command run in this process
    (:func:`_cli` where the process of its own is the point)."""
    from regn.cli import main
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_builds_a_soup_and_voxels(tmp_path, capsys):
    v, t = box_part((3, 3, 3), (7, 7, 7))
    lines = [f"v {x} {y} {z}" for x, y, z in v] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in t]
    (tmp_path / "rock.obj").write_text("\n".join(lines) + "\n")
    code, out, err = _main(capsys, "build", "--level", tmp_path / "rock.obj", "--box", -1, -1,
                           -1, 11, 11, 11, "--agent-radius", 0.5, "--max-voxels", VOX, "-o",
                           tmp_path / "a.rgn")
    assert code == 0, err
    assert "level rock.obj: 12 triangles" in out and "clearance check: pass" in out
    mesh = regn.load(tmp_path / "a.rgn")
    assert_clear_of_boxes(mesh, [((3, 3, 3), (7, 7, 7))], 0.5)
    np.save(tmp_path / "occ.npy", _cave())
    code, out, err = _main(capsys, "build", "--voxels", tmp_path / "occ.npy", "--voxel-size", 2,
                           "--origin", 1, 2, 3, "-o", tmp_path / "b.rgn", "--json")
    assert code == 0, err
    assert '"kind": "voxels"' in out and regn.load(tmp_path / "b.rgn").n_tets > 0


def test_cli_refuses_a_bad_level_with_one_line(tmp_path):
    (tmp_path / "bad.obj").write_text("v 0 0 0\nf 1 2 3\n")
    r = _cli("build", "--level", tmp_path / "bad.obj", "-o", tmp_path / "x.rgn")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "line 2" in r.stderr
    r = _cli("build", "--voxels", tmp_path / "none.npy", "-o", tmp_path / "x.rgn")
    assert r.returncode != 0 and "--voxel-size" in r.stderr


def test_a_closed_room_builds_by_default_and_says_what_solid_would_do(tmp_path, capsys):
    """An editor's room: a closed box of quads with a crate inside, the box
    the level's own bounds. By default (nested) the room's inside is air and
    the crate's solid: `regn locate` finds the room's middle and not the
    crate's; the build passes verify --strict. With --cavities solid the
    inside is walled in and made solid: one regn: line naming --cavities
    nested (it was a ZeroDivisionError), as a world too."""
    lines, base = [], 0
    for name, (lo, hi) in (("Room", ((0, 0, 0), (20, 20, 6))), ("Crate", ((8, 8, 0), (12, 12, 4)))):
        v, quads = box_soup(lo, hi)
        lines += [f"o {name}"] + [f"v {x} {y} {z}" for x, y, z in v]
        lines += ["f " + " ".join(str(base + i + 1) for i in q) for q in quads]
        base += len(v)
    level = tmp_path / "room.obj"
    level.write_text("\n".join(lines) + "\n")
    out = tmp_path / "room.rgn"
    args = ("build", "--level", level, "--agent-radius", "1", "--max-voxels", 64 ** 3,
            "--min-block", 0.9, "-o", out)
    code, _, err = _main(capsys, *args, "--cavities", "solid")
    assert code == 2 and err.startswith("regn: ") and err.count("\n") == 1, err
    assert "walled in" in err and "--cavities nested" in err and not out.exists()
    world = tmp_path / "w" / "world.json"                     # as a world: the same
    code, _, err_w = _main(capsys, *args[:-1], world, "--tile-size", 10, "--cavities", "solid")
    assert code == 2 and "--cavities nested" in err_w and not world.exists()
    code, text, err = _main(capsys, *args)
    assert code == 0, err
    assert "--cavities nested" in text and "warning" not in text
    assert _main(capsys, "verify", out, "--strict")[0] == 0
    (tmp_path / "points.txt").write_text("4 4 3\n10 10 2\n")  # the room, the crate
    code, text, err = _main(capsys, "locate", out, "--points", tmp_path / "points.txt", "--json")
    assert code == 0, err
    room, crate = json.loads(text)
    assert room >= 0 and crate == -1


def test_tetrahedra_too_flat_for_float32_face_planes_are_dropped():
    """A face plane stored in float32 cannot tell on which side a corner
    a few micrometres off it lies (at 100 m one float32 step is 7.6 um):
    such tetrahedra are dropped, those a millimetre high are kept."""
    from regn.geometry.tets import signed_volumes
    from regn.levels.tetra import _flat
    tris = np.array([[100.0, 100, 50], [101, 100, 50], [100, 101, 50]])
    heights = np.array([0.0, 2e-6, 1e-5, 1e-3, 0.5])
    tp = np.stack([np.vstack([tris, [[100.3, 100.3, 50 + h]]]) for h in heights])
    assert _flat(tp, signed_volumes(tp)).tolist() == [True, True, True, False, False]


def test_a_level_too_fine_for_one_regn_says_what_fits():
    from regn.errors import LimitError
    rng = np.random.default_rng(0)
    m = 20                                   # a 20x20 bumpy sheet: 0.5 m steps
    x = np.linspace(0, 10, m + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    v = np.stack([X, Y, 5 + rng.uniform(-2, 2, X.shape)], -1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    k = (i * (m + 1) + j).ravel()
    t = np.concatenate([np.stack([k, k + m + 1, k + m + 2], 1),
                        np.stack([k, k + m + 2, k + 1], 1)])
    # on 32^3 voxels its finest blocks need ~91 000 faces; what fits is those
    # blocks in part, so the hint is the next coarser level
    with pytest.raises(LimitError) as e:
        build_level(((0, 0, 0), (10, 10, 10)), Soup(v, t, "bumpy"), min_block=0.01,
                    max_voxels=VOX)
    msg = str(e.value)
    assert "faces" in msg and "65535" in msg and "fits" in msg and "tiles" in msg
    # the block it says fits does fit (it once named a block whose level only
    # fitted in part)
    import re
    hinted = float(re.search(r"--min-block ([0-9.e+-]+) fits", msg).group(1))
    assert hinted > 0.01
    _, tets, _ = build_level(((0, 0, 0), (10, 10, 10)), Soup(v, t, "bumpy"),
                             min_block=hinted, max_voxels=VOX)
    assert len(tets) > 0


def test_a_gltf_scene_is_flattened_with_its_transforms(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.Scene()
    box = trimesh.creation.box(extents=(1, 1, 1))
    for k in range(3):
        T = np.eye(4)
        T[:3, 3] = (10 * k, 0, 0)
        scene.add_geometry(box, node_name=f"b{k}", transform=T)
    scene.export(tmp_path / "s.glb")
    s = read_soup(tmp_path / "s.glb")
    assert len(s.tris) == 36 and s.objects == 3
    assert np.allclose(s.verts.min(axis=0), (-0.5, -0.5, -0.5))
    assert np.allclose(s.verts.max(axis=0), (20.5, 0.5, 0.5))


def test_solid_just_outside_the_box_keeps_its_distance():
    # a wall 0.3 m outside the box's +x face, the agent's radius 0.5: the
    # box's last 0.2 m on that side is within the radius of it
    v = np.array([[10.3, -5, -5], [10.3, 15, -5], [10.3, 15, 15], [10.3, -5, 15]], float)
    mesh = build(Soup(v, np.array([[0, 1, 2], [0, 2, 3]]), "outside"), bbox=((0,) * 3, (10,) * 3),
                 r=0.5)
    assert samples_in_tets(mesh)[:, 0].max() <= 10.3 - 0.5 + TOL
    from regn.builder.obstacles import Sphere
    ball = regn.generate(((0,) * 3, (10,) * 3), [Sphere((-1, 5, 5), 1.5)],
                         level=Soup(v, np.array([[0, 1, 2]]), "o"), agent_radius=0.25,
                         max_voxels=VOX, coverage_samples=0)
    assert np.linalg.norm(samples_in_tets(ball) - (-1, 5, 5), axis=1).min() >= 1.75 - TOL


def test_the_report_says_when_the_voxels_grow_the_solid_far_past_the_radius():
    """A 30 km field at 119 m voxels with a 1 m agent: the solid grows a whole
    voxel, 119 m, and the report says what that closes; 0.79 m voxels for a
    1 m agent (grown 1.58 m) say nothing."""
    from regn.cli._level_build import _coarse_growth
    rep = {"agent_radius": 1.0, "crack": 0.0, "dilation_voxels": [1, 1, 1],
           "voxel_size": [118.8, 119.0, 119.0]}
    (line,) = _coarse_growth(rep)
    assert "by 119 m, 119 x the agent's 1 m" in line and "about 238 m" in line
    rep.update(dilation_voxels=[2, 2, 2], voxel_size=[0.7882, 0.789, 0.79])
    assert _coarse_growth(rep) == []
    rep.update(agent_radius=0.0)
    assert _coarse_growth(rep) == []


def test_a_level_one_regn_covers_poorly_points_at_a_world_and_at_min_block(tmp_path, capsys):
    """The demo hangar for a 0.25 m agent: one REGN holds it only with
    coarser blocks (under 90 % covered), and the report's note says what to
    do: a world at the finest blocks, or --min-block for fewer tiles."""
    from regn.cli import main
    from regn.levels.examples import hangar_obj
    (tmp_path / "hangar.obj").write_text(hangar_obj())
    assert main(["build", "--level", str(tmp_path / "hangar.obj"), "--agent-radius", "0.25",
                 "--coverage-samples", "20000", "-o", str(tmp_path / "h.rgn")]) == 0
    note = [ln for ln in capsys.readouterr().out.splitlines() if "note: one REGN" in ln]
    assert len(note) == 1
    assert "-o DIR/world.json" in note[0] and "--min-block M" in note[0]
    covered = float(note[0].split("covering ")[1].split(" %")[0])
    assert covered < 90.0
