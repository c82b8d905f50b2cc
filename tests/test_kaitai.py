"""src/regn/data/regn.ksy: compile with kaitai-struct-compiler, parse objects
the library writes in every byte order and POF0 dialect, compare every field of
every record with the library.

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
from regn.format import layout, pof0

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
#: The generated module: named after the spec's meta/id, never ``regn``.
MODULE = "regn_object.py"


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
    """Compile regn.ksy to Python in ``outdir``; the generated file, or None."""
    ksy = outdir / "regn.ksy"
    ksy.write_text(_ksy_text())
    cli = shutil.which("kaitai-struct-compiler") or shutil.which("ksc")
    if cli:
        r = subprocess.run([cli, "-t", "python", "--outdir", str(outdir), str(ksy)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode == 0 and (outdir / MODULE).exists():
            return outdir / MODULE
    pkg = _npm_package()
    if pkg is None:
        return None
    (outdir / "spec.json").write_text(json.dumps(yaml.safe_load(_ksy_text())))
    (outdir / "driver.js").write_text(_NODE_DRIVER)
    r = subprocess.run([shutil.which("node"), str(outdir / "driver.js"), pkg,
                        str(outdir / "spec.json"), str(outdir)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"kaitai-struct-compiler failed on regn.ksy:\n{r.stderr}"
    assert (outdir / MODULE).exists(), sorted(os.listdir(outdir))
    return outdir / MODULE


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
    assert spec["meta"]["id"] == "regn_object"
    text = _ksy_text()
    for mark in ("[seed]", "[inferred]", "[unknown"):
        assert mark in text
    types = spec["types"]["object"]["types"]
    for t in ("chunk_header", "pof0_chunk", "pof0_table", "pof0_entry", "data_header", "tet",
              "face", "cell", "item", "ref"):
        assert t in types


def test_generated_module_does_not_shadow_the_library(ksy_module, tmp_path):
    """Compiled next to a script, the spec's module is ``regn_object``: the
    script's ``import regn`` still finds the library."""
    assert os.path.basename(ksy_module.__file__) == MODULE
    shutil.copy(ksy_module.__file__, tmp_path / MODULE)
    script = "import regn, regn_object; print(regn.load.__module__, regn_object.RegnObject.__name__)"
    r = subprocess.run([os.sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["regn.io", "RegnObject"]


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


@pytest.fixture(scope="module", params=[(0, 40, 0, (3, 3, 3)), (1, 150, 40, (6, 3, 5))],
                ids=["short-table", "long-entries"])
def built(request):
    m = _mesh(*request.param)
    gap = int(np.diff(m.expected_pointer_words()).max())
    # the second map needs long POF0 entries, so its two dialects differ
    assert (gap >= 1 << 14) == (request.param[1] == 150), gap
    return m


def _kaitai_value(v):
    """A parsed Kaitai value as plain Python: vectors and pairs as lists."""
    if isinstance(v, list):
        return [_kaitai_value(x) for x in v]
    if hasattr(v, "_read"):                       # vec3, vec4, portal_pair
        return [getattr(v, c) for c in ("x", "y", "z", "w", "cost", "aux") if hasattr(v, c)]
    return v


def _assert_field(got, want, what):
    want = np.asarray(want)
    if want.dtype.kind == "S":
        assert [g.encode() for g in np.ravel(got)] == list(np.ravel(want)), what
        return
    got = np.asarray(got, dtype=want.dtype.newbyteorder("=")).reshape(want.shape)
    np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("order", [">", "<"], ids=["big", "little"])
@pytest.mark.parametrize("dialect", [3, 4])
def test_kaitai_agrees_with_library(ksy_module, built, order, dialect):
    """Every field of every record, both chunk headers, the POF0 words and the
    grid's pointers, for an object the library wrote in this byte order and
    POF0 dialect."""
    data = built.dumps(byte_order=order, pof0_dialect=dialect)
    m = regn.loads(data)
    k = ksy_module.RegnObject.from_bytes(data)
    assert k.is_le == (order == "<")
    o = k.object
    assert o.pof0_dialect == m.pof0_dialect           # read from the bytes, as regn does
    assert o.chunk.tag == "REGN" and o.pof0.header.tag == "POF0"
    chunk = np.frombuffer(data, layout.dtype_for("chunk_header", order), 1, 0)[0]
    for name in chunk.dtype.names:
        _assert_field(_kaitai_value(getattr(o.chunk, name)), chunk[name], f"chunk.{name}")
    header = np.frombuffer(data, layout.display_dtype("header", order), 1, 0x10)[0]
    for name in header.dtype.names:
        _assert_field(_kaitai_value(getattr(o.data.header, name)), header[name], name)
    for k_sec, section in enumerate(layout.SECTION_NAMES):
        records = m.sections[section].view(layout.display_dtype(section, order))
        got = getattr(o.data, section)
        assert len(got) == len(records) == m.counts[k_sec]
        for name in records.dtype.names:
            values = [_kaitai_value(getattr(r, name)) for r in got]
            _assert_field(values, records[name], f"{section}.{name}")
    assert o.data.face_sentinels == bytes(96)
    # the grid's pointers, followed: cell -> item -> references -> tetrahedra
    cell_item = np.array([c.item_index if c.item_ptr else -1 for c in o.data.cells])
    np.testing.assert_array_equal(cell_item, m.cell_item)
    np.testing.assert_array_equal([it.first_ref for it in o.data.items], m.item_ref_start)
    np.testing.assert_array_equal([r.tet_index for r in o.data.refs], m.ref_tet)
    indptr, indices = m.grid_csr
    for c in np.flatnonzero(cell_item >= 0)[:50]:
        got = [r.tet_index for r in o.data.cells[c].item.refs]
        assert got == list(indices[indptr[c]:indptr[c + 1]])
    assert [f.is_boundary for f in o.data.faces] == list(m.face_tets[:, 1] < 0)
    # POF0: the running sums of the deltas are the library's pointer words
    deltas = [e.delta for e in o.pof0.table.entries if not e.is_end]
    lib = pof0.decode(bytes(m.parts.pof0_body), m.pof0_dialect).words
    np.testing.assert_array_equal(np.cumsum(deltas), lib)
    np.testing.assert_array_equal(np.cumsum(deltas), m.expected_pointer_words())
    assert o.trailer == bytes(m.trailer)
