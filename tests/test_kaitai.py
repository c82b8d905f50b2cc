"""src/regn/data/regn.ksy: compile with kaitai-struct-compiler, parse built maps,
compare field by field with the library.

The compiler is found as the ``kaitai-struct-compiler`` command (the Java CLI)
or as the npm package of the same name (``npm install -g kaitai-struct-compiler``,
a JavaScript library driven here through ``node``). Without either the tests skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from importlib import resources

import numpy as np
import pytest
import scipy.spatial

import regn
from regn.format.layout import PORTAL_PAIRS

yaml = pytest.importorskip("yaml")
pytest.importorskip("kaitaistruct")

_NODE_DRIVER = r"""
const fs = require('fs'), path = require('path');
const KSC = require(process.argv[2]);
const spec = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
KSC.compile('python', spec, null, false).then(files => {
  for (const [name, text] of Object.entries(files))
    fs.writeFileSync(path.join(process.argv[4], name), text);
}).catch(e => { console.error(String(e)); process.exit(1); });
"""


def _ksy_text():
    return resources.files("regn").joinpath("data/regn.ksy").read_text()


def _npm_package():
    npm, node = shutil.which("npm"), shutil.which("node")
    if not (npm and node):
        return None
    try:
        root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    pkg = os.path.join(root, "kaitai-struct-compiler")
    return pkg if os.path.exists(os.path.join(pkg, "package.json")) else None


def _compile(outdir):
    """Compile regn.ksy to Python in ``outdir``; returns the generated file or None."""
    ksy = outdir / "regn.ksy"
    ksy.write_text(_ksy_text())
    cli = shutil.which("kaitai-struct-compiler") or shutil.which("ksc")
    if cli:
        r = subprocess.run([cli, "-t", "python", "--outdir", str(outdir), str(ksy)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode == 0 and (outdir / "regn.py").exists():
            return outdir / "regn.py"
    pkg = _npm_package()
    if pkg is None:
        return None
    (outdir / "spec.json").write_text(json.dumps(yaml.safe_load(_ksy_text())))
    (outdir / "driver.js").write_text(_NODE_DRIVER)
    r = subprocess.run([shutil.which("node"), str(outdir / "driver.js"), pkg,
                        str(outdir / "spec.json"), str(outdir)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"kaitai-struct-compiler failed on regn.ksy:\n{r.stderr}"
    return outdir / "regn.py"


@pytest.fixture(scope="module")
def ksy_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("ksc")
    path = _compile(out)
    if path is None:
        pytest.skip("kaitai-struct-compiler not installed (neither the CLI nor the npm "
                    "package: npm install -g kaitai-struct-compiler)")
    spec = importlib.util.spec_from_file_location("regn_ksy_generated", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ksy_is_valid_yaml_with_marks():
    spec = yaml.safe_load(_ksy_text())
    assert spec["meta"]["endian"] == "be"
    text = _ksy_text()
    for mark in ("[seed]", "[inferred]", "[unknown"):
        assert mark in text
    assert "4 bytes" in spec["types"]["pof0_entry"]["doc"]
    for t in ("chunk_header", "pof0_table", "pof0_entry", "data_header", "tet", "face",
              "cell", "item", "ref"):
        assert t in spec["types"]


def _mesh(seed, n, drop, dims):
    rng = np.random.default_rng(seed)
    lo, hi = np.full(3, -5e4), np.full(3, 5e4)
    corners = np.array(np.meshgrid(*[[-5e4, 5e4]] * 3)).reshape(3, -1).T
    pts = np.vstack([rng.uniform(lo, hi, (n, 3)), corners])
    tets = scipy.spatial.Delaunay(pts).simplices[drop:]
    p = pts[tets]
    vol = np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p[:, 3] - p[:, 0])
    tets = tets[np.abs(vol) > 1e3]          # Delaunay slivers on the box faces
    return regn.build(pts, tets, bbox=(lo, hi), dims=dims)


@pytest.fixture(scope="module", params=[(0, 80, 0, (4, 4, 4)), (1, 150, 40, (6, 3, 5))])
def built(request):
    m = _mesh(*request.param)
    return regn.loads(m.dumps())


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def test_kaitai_agrees_with_library(ksy_module, built):
    m = built
    data_bytes = m.dumps()
    k = ksy_module.Regn.from_bytes(data_bytes)
    assert k.chunk.tag == "REGN" and k.pof0.header.tag == "POF0"
    d = k.data
    h = d.header
    assert tuple(h.counts) == tuple(m.counts)
    assert tuple(h.dims) == tuple(m.dims)
    assert tuple(h.section_ptrs) == tuple(int(x) for x in m.parts.section_offsets)
    np.testing.assert_array_equal(_f32(h.bbox_min[:3]), _f32(m.bbox_min))
    np.testing.assert_array_equal(_f32(h.cell_size), _f32(m.cell_size))
    # vertices
    kv = np.array([[v.x, v.y, v.z] for v in d.vertices], dtype=np.float32)
    np.testing.assert_array_equal(kv, _f32(m.vertices))
    # tetrahedra: vertices, faces, portal costs
    kt = d.tets
    assert len(kt) == m.n_tets
    np.testing.assert_array_equal(np.array([t.verts for t in kt]), m.tets)
    np.testing.assert_array_equal(np.array([t.faces for t in kt]), m.tet_faces)
    portal = np.array([[[p.cost, p.aux] for p in t.portal] for t in kt], dtype=np.float32)
    np.testing.assert_array_equal(portal, _f32(m.portal_costs))
    assert portal.shape == (m.n_tets, len(PORTAL_PAIRS), 2)
    np.testing.assert_array_equal(np.array([[t.centre.x, t.centre.y, t.centre.z] for t in kt],
                                           dtype=np.float32), _f32(m.tet_centres))
    # faces
    kf = d.faces
    assert len(kf) == m.n_faces
    assert [f.own for f in kf] == list(range(m.n_faces))
    ft = np.array([[f.tet_a, -1 if f.is_boundary else f.tet_b] for f in kf])
    np.testing.assert_array_equal(ft, m.face_tets)
    np.testing.assert_array_equal(np.array([[f.normal.x, f.normal.y, f.normal.z] for f in kf],
                                           dtype=np.float32), _f32(m.face_normals))
    assert all(f.w == 1.0 for f in kf)
    assert d.face_sentinels == bytes(96)
    # grid: cells -> items -> refs -> tets
    cell_item = np.array([c.item_index if c.item_ptr else -1 for c in d.cells])
    np.testing.assert_array_equal(cell_item, m.cell_item)
    assert [it.n for it in d.items] == [int(x) for x in np.diff(
        np.append(m.item_ref_start, m.n_refs))]
    np.testing.assert_array_equal(np.array([r.tet_index for r in d.refs]), m.ref_tet)
    indptr, indices = m.grid_csr
    for c in np.flatnonzero(cell_item >= 0)[:50]:
        cell = d.cells[c]
        got = [r.tet_index for r in cell.item.refs]
        assert got == list(indices[indptr[c]:indptr[c + 1]])
    # POF0: the running sums of the deltas are the library's pointer words
    deltas = [e.delta for e in k.pof0.table.entries if not e.is_end]
    from regn.format import pof0
    lib = pof0.decode(bytes(m.parts.pof0_body), m.pof0_dialect).words
    np.testing.assert_array_equal(np.cumsum(deltas), lib)
    np.testing.assert_array_equal(np.cumsum(deltas), m.expected_pointer_words())
