"""A Mesh travels: pickling sends the object's bytes (never the cached arrays
or query structures), and queries answered in other processes — a
multiprocessing pool, a Dask cluster — equal the local ones."""

import multiprocessing
import pickle

import numpy as np
import pytest

import regn
from regn.format.reader import parse
from regn.mesh import Mesh
from regn.query.common import scratch

import pool_workers
from conftest import sphere_holes_map


@pytest.fixture(scope="module")
def holes_map():
    return sphere_holes_map(seed=3)[0]


def same_mesh(a, b):
    """What a user would compare by hand: the bytes, the arrays, the extras."""
    assert b.dumps() == a.dumps()
    assert (b.byte_order, b.pof0_dialect, b.path, b.trailer) == \
        (a.byte_order, a.pof0_dialect, a.path, a.trailer)
    assert b.counts == a.counts and b.dims == a.dims
    for name in ("vertices", "tets", "neighbors", "portal_costs", "face_vertices",
                 "cell_item", "item_ref_start", "ref_tet"):
        np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
    indptr, indices = b.grid_csr
    np.testing.assert_array_equal(indptr, a.grid_csr[0])
    np.testing.assert_array_equal(indices, a.grid_csr[1])


@pytest.mark.parametrize("order", [">", "<"])
@pytest.mark.parametrize("dialect", [3, 4])
def test_a_loaded_mesh_pickles_as_the_bytes_read(small_map, order, dialect):
    data = small_map.dumps(byte_order=order, pof0_dialect=dialect) + b"TRAILER!"
    m = regn.loads(data, path="maps/stage.rgn")
    back = pickle.loads(pickle.dumps(m))
    assert back.object_bytes() == data           # byte for byte, trailer included
    same_mesh(m, back)
    assert back.pof0_dialect == dialect and back.byte_order == order


@pytest.mark.parametrize("dialect", [3, 4])
def test_a_built_mesh_pickles_as_the_bytes_it_writes(holes_map, dialect):
    m = regn.loads(holes_map.dumps(pof0_dialect=dialect))
    built = Mesh(header=m.header, sections=m.sections, cell_item=m.cell_item,
                 item_ref_start=m.item_ref_start, ref_tet=m.ref_tet,
                 pof0_dialect=dialect, path="built.rgn")
    assert built.parts is None
    back = pickle.loads(pickle.dumps(built))
    same_mesh(built, back)
    assert back.pof0_dialect == dialect          # kept even where the table cannot say
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(holes_map, protocol)).dumps() == holes_map.dumps()


def test_an_object_read_inside_a_larger_buffer_pickles_alone(small_map):
    data = small_map.dumps()
    blob = b"\0" * 64 + data + b"more of the container"
    m = Mesh.from_parts(parse(blob, 64))
    back = pickle.loads(pickle.dumps(m))
    assert back.object_bytes() == data and back.trailer == b""
    same_mesh(m, back)


def test_caches_do_not_travel(holes_map):
    m = regn.loads(holes_map.dumps())
    size_cold = len(pickle.dumps(m))
    A, B = m.random_points(20, seed=1), m.random_points(20, seed=2)
    before = pool_workers.answers(m, A, A, B)     # fills the arrays and scratch(m)
    assert scratch(m)
    assert len(pickle.dumps(m)) == size_cold      # only the object's bytes
    assert size_cold < len(m.object_bytes()) + 1000
    back = pickle.loads(pickle.dumps(m))
    assert not scratch(back) and "vertices" not in vars(back)
    after = pool_workers.answers(back, A, A, B)   # rebuilt on first use
    same_answers(before, after)


def same_answers(a, b):
    for key in ("locate", "line_of_sight", "distance_to_wall", "path_cost"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    for p, q in zip(a["path_points"], b["path_points"]):
        np.testing.assert_array_equal(p, q)


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_multiprocessing_pool_answers_like_this_process(holes_map, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method on this platform")
    m = holes_map
    pts = np.random.default_rng(5).uniform(m.bbox_min, m.bbox_max, (2000, 3))
    A, B = m.random_points(24, seed=6), m.random_points(24, seed=7)
    local = pool_workers.answers(m, pts, A, B)
    chunks = [(pts[i::3], A[i::3], B[i::3]) for i in range(3)]
    ctx = multiprocessing.get_context(method)
    # the pattern the README shows: the mesh goes to each worker once
    with ctx.Pool(2, initializer=pool_workers.keep_mesh, initargs=(m,)) as pool:
        parts = pool.starmap(pool_workers.answers_of_kept_mesh, chunks)
        # and as a task argument, which is pickled whatever the start method
        assert pool.apply(pool_workers.scratch_is_empty, (m,))
        whole = pool.apply(pool_workers.answers, (m, pts, A, B))
    same_answers(local, whole)
    for i, part in enumerate(parts):
        for key in ("locate", "distance_to_wall"):
            np.testing.assert_array_equal(part[key], local[key][i::3])
        for key in ("line_of_sight", "path_cost"):
            np.testing.assert_array_equal(part[key], local[key][i::3])
        for p, q in zip(part["path_points"], local["path_points"][i::3]):
            np.testing.assert_array_equal(p, q)


def test_a_dask_cluster_maps_path_queries_like_this_process(holes_map):
    from distributed import Client, LocalCluster
    m = holes_map
    A, B = m.random_points(60, seed=8), m.random_points(60, seed=9)
    pairs = list(zip(A, B))
    local = pool_workers.path_costs(m, pairs)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        shared = client.scatter(m, broadcast=True)
        chunks = [pairs[i::4] for i in range(4)]
        futures = client.map(pool_workers.path_costs, [shared] * 4, chunks)
        remote = client.gather(futures)
        on_workers = client.run(lambda: 1)
    assert len(on_workers) == 2
    for i, chunk in enumerate(remote):
        for (cost, portals), (c, p) in zip(chunk, local[i::4]):
            assert cost == c
            np.testing.assert_array_equal(portals, p)
    assert sum(np.isfinite(c) for c, _ in local) > 40       # real paths, not all misses
