"""regn.crowd: agents that follow their corridors, avoid each other (ORCA)
and never enter rock; the `regn fly` command."""

import json
import pickle

import numpy as np
import pytest
from conftest import random_map, sphere_holes_map

import regn
from regn.cli import main


@pytest.fixture(scope="module")
def holes():
    """A 100 km box with 4 round asteroids (radius 9 km), and their centres."""
    return sphere_holes_map()


@pytest.fixture(scope="module")
def open_box():
    """A 100 km box with no obstacles: its only walls are the box's faces."""
    return random_map(n_points=60, seed=2, hole_fraction=0.0)


def fly(crowd, dt, steps, push=None):
    """Positions (steps+1, N, 3) of ``steps`` steps (``push(crowd)`` before each)."""
    out = [crowd.position.copy()]
    for _ in range(steps):
        if push is not None:
            push(crowd)
        crowd.step(dt)
        out.append(crowd.position.copy())
    return np.array(out)


def segment_distance(p, a, b):
    d = b - a
    t = np.clip(((p - a) @ d) / (d @ d), 0, 1)
    return np.linalg.norm(p - (a + t * d))


def polyline_distance(p, line):
    return min(segment_distance(p, line[k], line[k + 1]) for k in range(len(line) - 1))


def bent_route(mesh, centres, r):
    """A start and goal on either side of an asteroid, whose path for a
    sphere of radius r turns round it (three corners or more)."""
    c = centres[0]
    for axis in np.eye(3):
        a, b = c - 16_000 * axis, c + 16_000 * axis
        p = mesh.find_path(a, b, radius=r)
        if p.found and len(p.points) >= 3:
            return a, b, p
    raise AssertionError("no bent path")


def test_one_agent_follows_its_path(holes):
    mesh, centres = holes
    r = 300.0
    a, b, path = bent_route(mesh, centres, r)
    crowd = regn.Crowd(mesh)
    crowd.add_agents([a], [b], radius=r, max_speed=250.0, max_accel=100.0)
    track = fly(crowd, 0.2, 1200)
    assert crowd.status_names[0] == "arrived"
    assert np.linalg.norm(crowd.position[0] - b) <= 0.5 * r
    gaps = [polyline_distance(p, path.points) for p in track]
    assert max(gaps) <= r                    # within its radius of the planned path
    assert (mesh.distance_to_wall(track[:, 0]) >= r).all()
    # it stops at the goal: its speed there is (almost) zero
    assert np.linalg.norm(crowd.velocity[0]) < 1.0


def test_two_head_on_agents_pass_without_overlap(open_box):
    r = 200.0
    crowd = regn.Crowd(open_box, time_horizon=5.0)
    a, b = np.array([-5000.0, 0, 0]), np.array([5000.0, 0, 0])
    crowd.add_agents([a, b], [b, a], radius=r, max_speed=100.0)
    track = fly(crowd, 0.1, 1500)
    gap = np.linalg.norm(track[:, 0] - track[:, 1], axis=1)
    assert gap.min() >= 2 * r * 0.99
    assert list(crowd.status_names) == ["arrived", "arrived"]
    # they did swap sides
    assert np.linalg.norm(crowd.position - [b, a], axis=1).max() <= 0.5 * r


def fibonacci_sphere(n, radius):
    k = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * k / n)
    theta = np.pi * (1 + 5 ** 0.5) * k
    return radius * np.column_stack([np.cos(theta) * np.sin(phi),
                                     np.sin(theta) * np.sin(phi), np.cos(phi)])


def test_a_dense_antipodal_group_never_overlaps(open_box):
    """150 agents on a sphere each fly to its antipode: all meet in one knot
    at the centre (where ORCA's linear programs run out of room), yet no two
    ever overlap by more than 1 % of their radii's sum, and all arrive."""
    from scipy.spatial import cKDTree
    r = 1.5
    start = fibonacci_sphere(150, 15.0)
    crowd = regn.Crowd(open_box, time_horizon=10.0, neighbor_dist=15.0, max_neighbors=10)
    crowd.add_agents(start, -start, radius=r, max_speed=2.0)
    worst = 0.0
    for _ in range(600):
        crowd.step(0.125)
        pairs = cKDTree(crowd.position).query_pairs(2 * r, output_type="ndarray")
        if len(pairs):
            d = np.linalg.norm(crowd.position[pairs[:, 0]] - crowd.position[pairs[:, 1]], axis=1)
            worst = max(worst, float(((2 * r - d) / (2 * r)).max()))
        if (crowd.status == regn.crowd.crowd.STATUS["arrived"]).all():
            break
    assert worst <= 0.01
    assert list(np.unique(crowd.status_names)) == ["arrived"]


def test_an_agent_pushed_at_a_wall_never_crosses_it(holes):
    mesh, centres = holes
    r = 250.0
    c = centres[0]
    nw = mesh.nearest_wall([c + [12_000.0, 0, 0]])
    start = nw.points[0] - nw.normals[0] * (r + 1500.0)     # 1.5 km off the rock
    inward = nw.normals[0]                                 # out of the volume: into rock
    crowd = regn.Crowd(mesh)
    crowd.add_agents([start], [start + 30_000 * inward], radius=r, max_speed=400.0,
                     max_accel=5.0)                        # its goal is behind the rock

    def push(cr):
        cr.velocity[0] = 400.0 * inward                   # flung at the wall every step

    track = fly(crowd, 0.1, 200, push=push)
    clearance = mesh.distance_to_wall(track[:, 0])
    assert (mesh.locate(track[:, 0]) >= 0).all()
    assert clearance.min() >= r
    assert clearance.min() < r + 100.0                      # it did reach the wall


def test_a_blocked_corridor_replans(holes):
    mesh, _centres = holes
    r = 200.0
    a, b = np.array([-40_000.0, -40_000, -40_000]), np.array([40_000.0, 40_000, 40_000])
    f = regn.QueryFilter(mesh)
    crowd = regn.Crowd(mesh, filter=f)
    crowd.add_agents([a], [b], radius=r, max_speed=500.0)
    crowd.step(0.5)
    before = crowd.corridors[0].copy()
    seg = np.linalg.norm(np.diff(before, axis=0), axis=1)
    k = np.searchsorted(np.cumsum(seg), 0.5 * seg.sum())
    block = 0.5 * (before[k] + before[k + 1])               # half way along the corridor
    f.block_sphere(block, 3000.0)
    crowd.step(0.5)
    after = crowd.corridors[0]
    assert not np.array_equal(before, after)
    assert after[0] == pytest.approx(crowd.position[0] - 0.5 * crowd.velocity[0])
    # the new corridor keeps out of the blocked tetrahedra
    tets = crowd._corridors[0][1]
    assert not f.blocked[tets].any()
    fly(crowd, 0.5, 1000)
    assert crowd.status_names[0] == "arrived"


def swarm(mesh, n=24, seed=5):
    rng = np.random.default_rng(seed)
    p = mesh.random_points(n, seed=seed, radius=400)
    g = mesh.random_points(n, seed=seed + 1, radius=400)
    crowd = regn.Crowd(mesh, workers=1)
    crowd.add_agents(p, g, radius=rng.uniform(100, 300, n), max_speed=rng.uniform(200, 400, n),
                     max_accel=80.0)
    return crowd


def test_max_turn_rate_bounds_the_heading(open_box):
    """Flying +x with its goal straight behind, an agent turns round no
    faster than its max turn rate (without one it reverses at once)."""
    def headings(turn):
        crowd = regn.Crowd(open_box)
        crowd.add_agents([[0.0, 0, 0]], [[-20_000.0, 0, 0]], radius=50.0, max_speed=100.0,
                         velocities=[[100.0, 0, 0]], max_turn_rate=turn)
        v = [crowd.velocity[0].copy()]
        for _ in range(150):
            crowd.step(0.1)
            v.append(crowd.velocity[0].copy())
        v = np.array(v)
        u = v / np.linalg.norm(v, axis=1)[:, None]
        return np.arccos(np.clip((u[1:] * u[:-1]).sum(axis=1), -1, 1)), v
    turns, v = headings(0.3)
    assert turns.max() <= 0.3 * 0.1 + 1e-9
    assert turns.sum() == pytest.approx(np.pi, abs=0.05)    # it did turn round, smoothly
    assert v[-1, 0] < -99.0
    free, _ = headings(np.inf)
    assert free.max() > 3.0


def test_a_group_flies_down_a_cost_field(holes):
    mesh, _ = holes
    goal = np.array([30_000.0, 30_000, 30_000])
    field = mesh.cost_field(goal)
    starts = mesh.random_points(6, seed=31, radius=400)
    crowd = regn.Crowd(mesh)
    crowd.add_agents(starts, radius=150.0, max_speed=400.0, max_accel=100.0)
    crowd.set_goals(field=field)
    crowd.step(0.5)
    for i in range(6):                                     # corridors read off the field
        assert np.allclose(crowd.corridors[i], field.path_from(starts[i]).points)
    track = fly(crowd, 0.5, 1500)
    assert list(np.unique(crowd.status_names)) == ["arrived"]
    # the group gathered round the goal, one of them on it
    gap = np.linalg.norm(crowd.position - goal, axis=1)
    assert gap.min() <= 0.5 * 150.0 and gap.max() <= 6 * 300.0
    assert (mesh.distance_to_wall(track.reshape(-1, 3)) >= 150.0).all()
    with pytest.raises(regn.errors.QueryError):
        crowd.set_goals([goal], [0], field=field)


def test_the_same_inputs_give_the_same_trajectories(holes):
    mesh, _ = holes
    one = fly(swarm(mesh), 0.2, 60)
    again = fly(swarm(mesh), 0.2, 60)
    c2 = swarm(mesh)
    c2.workers = 2
    two = fly(c2, 0.2, 60)
    assert np.array_equal(one, again)
    assert np.array_equal(one, two)


def test_a_crowd_pickles(holes):
    mesh, _ = holes
    crowd = swarm(mesh)
    fly(crowd, 0.2, 10)
    copy = pickle.loads(pickle.dumps(crowd))
    assert np.array_equal(copy.position, crowd.position)
    assert np.array_equal(fly(copy, 0.2, 20), fly(crowd, 0.2, 20))


def test_cli_fly_writes_the_documented_npz(holes, tmp_path):
    mesh, _ = holes
    rgn = tmp_path / "m.rgn"
    regn.save(mesh, rgn)
    p = mesh.random_points(5, seed=11, radius=400)
    g = mesh.random_points(5, seed=12, radius=400)
    rows = ["x,y,z,gx,gy,gz,radius,max_speed,max_accel"]
    rows += [",".join(f"{v:.3f}" for v in (*p[i], *g[i], 150, 300, 50)) for i in range(5)]
    (tmp_path / "a.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "t.npz"
    assert main(["fly", str(rgn), "--agents", str(tmp_path / "a.csv"), "--steps", "7",
                 "-o", str(out)]) == 0
    z = np.load(out)
    assert z["positions"].shape == (8, 5, 3)
    assert z["velocities"].shape == (8, 5, 3)
    assert z["status"].shape == (5,)
    assert z["arrived_step"].shape == (5,)
    assert np.allclose(z["positions"][0], np.round(p, 3))


def test_cli_fly_bad_csv_is_one_regn_line(holes, tmp_path, capsys):
    mesh, _ = holes
    rgn = tmp_path / "m.rgn"
    regn.save(mesh, rgn)
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y,z,gx,gy,gz,radius,max_speed,max_accel\n"
                   "0,0,0,1,1,1,10,5,1\n"
                   "0,0,zero,1,1,1,10,5,1\n")
    code = main(["fly", str(rgn), "--agents", str(bad), "--steps", "3",
                 "-o", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1
    assert err[0].startswith("regn: ") and str(bad) in err[0] and "line 3" in err[0]
    assert not (tmp_path / "t.npz").exists()


def test_trajectory_csv_and_vtp_read_back(holes, tmp_path):
    from regn.crowd.trajectory import fly as record
    mesh, _ = holes
    crowd = swarm(mesh, n=4)
    traj = record(crowd, 0.2, steps=3)
    traj.write(tmp_path / "t.csv")
    rows = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1)
    assert rows.shape == (4 * 4, 9)
    assert np.allclose(rows[-1, 3:6], traj.positions[3, 3])
    traj.write(tmp_path / "t.vtp")
    vtk = pytest.importorskip("vtk")
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(str(tmp_path / "t.vtp"))
    r.Update()
    out = r.GetOutput()
    assert out.GetNumberOfPoints() == 16 and out.GetNumberOfLines() == 4
    p = np.array(out.GetPoint(4 * 1 + 2))                  # agent 1, step 2
    assert np.allclose(p, traj.positions[2, 1])


def test_trajectory_pvd_is_a_time_series_paraview_reads(holes, tmp_path):
    import xml.etree.ElementTree as ET

    from regn.crowd.trajectory import fly as record
    vtk = pytest.importorskip("vtk")
    from vtk.util.numpy_support import vtk_to_numpy
    mesh, _ = holes
    traj = record(swarm(mesh, n=4), 0.2, steps=3)
    traj.write(tmp_path / "t.pvd")
    sets = ET.parse(tmp_path / "t.pvd").getroot().findall("./Collection/DataSet")
    # one file a step, at its time
    assert [float(s.get("timestep")) for s in sets] == pytest.approx([0, 0.2, 0.4, 0.6])
    for k, ds in enumerate(sets):
        r = vtk.vtkXMLPolyDataReader()
        r.SetFileName(str(tmp_path / ds.get("file")))
        r.Update()
        out = r.GetOutput()
        assert out.GetNumberOfPoints() == 4 and out.GetNumberOfVerts() == 4
        assert np.allclose(vtk_to_numpy(out.GetPoints().GetData()), traj.positions[k])
        pd = out.GetPointData()
        assert np.allclose(vtk_to_numpy(pd.GetArray("radius")), traj.radius, rtol=1e-6)
        assert np.allclose(vtk_to_numpy(pd.GetArray("velocity")), traj.velocities[k],
                           rtol=1e-5, atol=1e-3)
        assert (vtk_to_numpy(pd.GetArray("status")) == traj.statuses[k]).all()
    assert (traj.statuses[0] == regn.crowd.crowd.STATUS["idle"]).all()    # before planning
    assert (traj.statuses[-1] == traj.status).all()


def test_cli_fly_pvd_keeps_an_existing_series(holes, tmp_path):
    mesh, _ = holes
    rgn = tmp_path / "m.rgn"
    regn.save(mesh, rgn)
    p = mesh.random_points(2, seed=11, radius=400)
    rows = ["x,y,z,gx,gy,gz,radius,max_speed,max_accel"]
    rows += [",".join(f"{v:.3f}" for v in (*p[i], *p[1 - i], 150, 300, 50)) for i in range(2)]
    (tmp_path / "a.csv").write_text("\n".join(rows) + "\n")
    base = ["fly", str(rgn), "--agents", str(tmp_path / "a.csv"), "-o", str(tmp_path / "t.pvd")]
    args = base + ["--steps", "4"]
    assert main(args) == 0
    assert sorted(x.name for x in (tmp_path / "t").iterdir()) == \
        [f"step_00000{k}.vtp" for k in range(5)]
    assert main(args) != 0                                 # exists: not overwritten
    assert main(base + ["--steps", "2", "--force"]) == 0
    assert len(list((tmp_path / "t").iterdir())) == 3       # the longer run's steps gone


def test_serve_crowd_session(holes):
    import json

    from regn.cli.serve_cmd import Service
    mesh, _ = holes
    svc = Service(mesh, workers=1)
    p = mesh.random_points(3, seed=21, radius=400)
    g = mesh.random_points(3, seed=22, radius=400)

    def ask(**req):
        return json.loads(svc.answer(json.dumps({"id": 1, **req})))

    assert ask(query="crowd_add", positions=p.tolist(), goals=g.tolist(), radius=150,
               max_speed=[300, 300, 300])["ids"] == [0, 1, 2]
    assert "error" in ask(query="crowd_goals", ids=[5], goals=[[0, 0, 0]])
    assert ask(query="crowd_goals", ids=[2], goals=[p[2].tolist()])["agents"] == 1
    out = ask(query="crowd_step", dt=0.5, steps=4)
    assert out["steps"] == 4 and out["time"] == 2.0
    state = ask(query="crowd_state", ids=[0, 2])
    assert state["ids"] == [0, 2] and len(state["position"]) == 2
    # agent 0 flew toward its goal
    assert np.linalg.norm(np.array(state["position"][0]) - g[0]) < np.linalg.norm(p[0] - g[0])
    assert state["status"][1] == "arrived"                 # its goal is where it was
    # a group target: one cost field, agents 0 and 1 fly down it to g[0]
    assert ask(query="crowd_goals", ids=[0, 1], target=g[0].tolist())["agents"] == 2
    assert "error" in ask(query="crowd_goals", ids=[0], goals=[[0, 0, 0]], target=[0, 0, 0])
    before = np.array(ask(query="crowd_state", ids=[1])["position"][0])
    ask(query="crowd_step", dt=0.5, steps=4)
    after = np.array(ask(query="crowd_state", ids=[1])["position"][0])
    assert np.linalg.norm(after - g[0]) < np.linalg.norm(before - g[0])


def test_view_plays_trajectories_back(holes, tmp_path):
    mesh, _ = holes
    rgn = tmp_path / "m.rgn"
    regn.save(mesh, rgn)
    from regn.crowd.trajectory import fly as record
    record(swarm(mesh, n=3), 0.5, steps=5).write(tmp_path / "t.npz")
    out = tmp_path / "v.html"
    assert main(["view", str(rgn), "--trajectories", str(tmp_path / "t.npz"),
                 "-o", str(out)]) == 0
    page = out.read_text()
    assert '"play"' in page and "t = " in page and "3 agents" in page
    assert main(["view", str(rgn), "--trajectories", str(rgn), "-o",
                 str(tmp_path / "w.html")]) == 2


def test_until_arrived_stops_when_a_shared_goal_stalls_the_flight(open_box):
    """Two ships sent to one point: the first holds it, the second can only
    circle it. The flight ends as 'stalled' after stall_time, not at
    max_steps; a flight where every ship can arrive ends as 'arrived'."""
    from regn.crowd.trajectory import fly as record
    goal = np.array([2000.0, 0, 0])
    crowd = regn.Crowd(open_box)
    crowd.add_agents([(-2000.0, 0, 0), (-2000.0, 3000, 0)], [goal, goal], radius=200.0,
                     max_speed=400.0, max_accel=100.0)
    traj = record(crowd, 0.5, until_arrived=True, max_steps=5000, stall_time=20.0)
    assert traj.stopped == "stalled"
    assert sorted(crowd.status_names) == ["arrived", "moving"]
    assert traj.steps < 200                     # arrival (~30 steps) + a 40-step window
    left = crowd.distance_left()
    assert left[crowd.status_names == "arrived"] == 0.0
    assert 0 < left[crowd.status_names == "moving"][0] < 2 * 200 * 1.1
    assert "stopped: stalled" in repr(traj) and len(repr(traj)) < 200
    apart = regn.Crowd(open_box)
    apart.add_agents([(-2000.0, 0, 0), (-2000.0, 3000, 0)], [goal, goal + (0, 3000, 0)],
                     radius=200.0, max_speed=400.0, max_accel=100.0)
    assert record(apart, 0.5, until_arrived=True, max_steps=5000).stopped == "arrived"
    slow = regn.Crowd(open_box)                 # 30 s gain a fraction of its radius
    slow.add_agents([(-1000.0, 0, 0)], [(1000.0, 0, 0)], radius=500.0, max_speed=10.0)
    traj = record(slow, 2.0, until_arrived=True, max_steps=5000, stall_time=20.0)
    assert traj.stopped == "arrived" and traj.steps > 80      # 8 windows


def test_cli_fly_refuses_a_start_in_rock_and_names_who_did_not_arrive(holes, tmp_path, capsys):
    mesh, centres = holes
    rgn = tmp_path / "m.rgn"
    regn.save(mesh, rgn)
    p = mesh.random_points(2, seed=11, radius=400)
    head = "x,y,z,gx,gy,gz,radius,max_speed,max_accel\n"
    row = lambda a, b: ",".join(f"{v:.3f}" for v in (*a, *b, 150, 3000, 500)) + "\n"
    bad = tmp_path / "rock.csv"
    bad.write_text(head + row(p[0], p[1]) + "\n" + row(centres[0], p[1]))
    out = tmp_path / "t.npz"
    code = main(["fly", str(rgn), "--agents", str(bad), "--until-arrived", "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and not out.exists()
    assert err[0].startswith(f"regn: {bad}: line 4: the start (") and "regn nearest" in err[0]
    shared = tmp_path / "shared.csv"                      # two ships, one goal
    shared.write_text(head + row(p[0], p[1]) + row(p[0] + (0, 0, 1000), p[1]))
    assert main(["fly", str(rgn), "--agents", str(shared), "--until-arrived", "--dt", "0.5",
                 "--stall-time", "20", "-o", str(out)]) == 1      # written, not all arrived
    said = capsys.readouterr().out
    assert "not arrived: 1 (" in said and "stopped: none of them got a radius closer" in said
    assert np.load(out)["positions"].shape[0] < 2000
    assert "--gather flies the agents of one goal as a group" in said
    assert main(["fly", str(rgn), "--agents", str(shared), "--until-arrived", "--dt", "0.5",
                 "--gather", "-o", str(out), "--force", "--json"]) == 0   # as a group: both
    summary = json.loads(capsys.readouterr().out)
    assert summary["groups"] == 1 and summary["status"] == {"arrived": 2}
    assert summary["stopped"] == "arrived"
    one = tmp_path / "one.csv"                              # the same flight, one ship
    one.write_text(head + row(p[0], p[1]))
    assert main(["fly", str(rgn), "--agents", str(one), "--until-arrived", "--dt", "0.5",
                 "-o", str(out), "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["not_arrived_lines"] == []
    wide = tmp_path / "wide.csv"                            # wider than any passage
    wide.write_text(head + ",".join(f"{v:.3f}" for v in (*p[0], *p[1], 1e5, 3000, 500)) + "\n")
    assert main(["fly", str(rgn), "--agents", str(wide), "--until-arrived", "--dt", "0.5",
                 "-o", str(out), "--force"]) == 1
    said = capsys.readouterr().out
    assert "no_path: 1 found no corridor wide enough" in said and "--radius 100000" in said
