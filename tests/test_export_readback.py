"""Every file ``regn export`` writes opens in the reader a user of its format
would pick, and every volume builds back into the same map with
``regn build --from-mesh``:

* ``.vtu`` ``.vtk`` — VTK's own readers; ``.xdmf`` — VTK's XDMF reader and
  ``pyvista.read``; ``.msh`` ``.mesh`` — gmsh;
* ``.obj`` ``.ply`` ``.stl`` — VTK's readers (trimesh's are tested in test_export.py).
"""

import numpy as np
import pytest

import regn
from regn.cli import main
from test_export import asteroid_map

VTK_TETRA = 10
GMSH_TETRA = 4


@pytest.fixture(scope="module")
def field():
    """A box with two spherical asteroids, each a closed polyhedron."""
    return asteroid_map()


@pytest.fixture(scope="module")
def exported(field, tmp_path_factory):
    """{extension: path} of every export of ``field``, written by the CLI."""
    folder = tmp_path_factory.mktemp("exports")
    src = folder / "field.rgn"
    regn.save(field, src)
    paths = {}
    for ext in (".vtu", ".vtk", ".msh", ".xdmf", ".mesh", ".obj", ".ply", ".stl"):
        paths[ext] = folder / f"field{ext}"
        assert main(["export", str(src), str(paths[ext])]) == 0
    return paths


def assert_same_tetrahedra(field, points, tets):
    assert np.allclose(points, field.vertices)
    assert np.array_equal(tets, field.tets)


@pytest.mark.parametrize("ext", [".vtu", ".vtk", ".msh", ".xdmf", ".mesh"])
def test_regn_build_from_mesh_reads_every_volume(field, exported, tmp_path, ext, capsys):
    out = tmp_path / "back.rgn"
    assert main(["build", "--from-mesh", str(exported[ext]), "-o", str(out)]) == 0, \
        capsys.readouterr().err
    back = regn.load(out)
    assert back.n_tets == field.n_tets and back.n_vertices == field.n_vertices
    assert np.isclose(back.tet_volumes.sum(), field.tet_volumes.sum(), rtol=1e-6)
    assert regn.verify(back, strict=True).ok


# --- VTK and pyvista ----------------------------------------------------------------
def vtk_grid_arrays(grid):
    """(points, (T,4) connectivity, set of cell types, {cell data name: array})."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(-1, 4)
    types = {grid.GetCellType(i) for i in range(grid.GetNumberOfCells())}
    data = grid.GetCellData()
    arrays = {data.GetArrayName(i): vtk_to_numpy(data.GetArray(i))
              for i in range(data.GetNumberOfArrays())}
    return vtk_to_numpy(grid.GetPoints().GetData()), conn, types, arrays


def vtk_read(reader_class, path):
    reader = reader_class()
    reader.SetFileName(str(path))
    reader.Update()
    return reader.GetOutputDataObject(0)


def assert_vtk_volume(field, grid):
    points, conn, types, arrays = vtk_grid_arrays(grid)
    assert types == {VTK_TETRA}
    assert_same_tetrahedra(field, points, conn)
    assert np.isclose(arrays["volume"].sum(), field.tet_volumes.sum(), rtol=1e-12)
    assert np.array_equal(arrays["component"], field.components())


def test_vtk_reads_vtu(field, exported):
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
    assert_vtk_volume(field, vtk_read(vtkXMLUnstructuredGridReader, exported[".vtu"]))


def test_vtk_reads_legacy_vtk(field, exported):
    from vtkmodules.vtkIOLegacy import vtkUnstructuredGridReader
    assert_vtk_volume(field, vtk_read(vtkUnstructuredGridReader, exported[".vtk"]))


def test_vtk_reads_xdmf(field, exported):
    from vtkmodules.vtkIOXdmf2 import vtkXdmfReader
    assert_vtk_volume(field, vtk_read(vtkXdmfReader, exported[".xdmf"]))


def test_pyvista_reads_xdmf(field, exported):
    import pyvista
    grid = pyvista.read(exported[".xdmf"])
    assert grid.n_cells == field.n_tets
    assert_vtk_volume(field, grid)


@pytest.mark.parametrize("ext,reader", [(".obj", "vtkIOGeometry.vtkOBJReader"),
                                        (".ply", "vtkIOPLY.vtkPLYReader"),
                                        (".stl", "vtkIOGeometry.vtkSTLReader")])
def test_vtk_reads_surfaces(field, exported, ext, reader):
    import importlib
    from vtkmodules.vtkFiltersCore import vtkFeatureEdges, vtkMassProperties
    module, name = reader.split(".")
    surface = vtk_read(getattr(importlib.import_module(f"vtkmodules.{module}"), name),
                       exported[ext])
    assert surface.GetNumberOfPolys() == len(field.boundary_faces)
    # closed (STL stores each triangle's corners: VTK's reader merges them)
    edges = vtkFeatureEdges()
    edges.SetInputData(surface)
    for flag in ("BoundaryEdges", "NonManifoldEdges"):
        getattr(edges, f"{flag}On")()
    for flag in ("FeatureEdges", "ManifoldEdges"):
        getattr(edges, f"{flag}Off")()
    edges.Update()
    assert edges.GetOutput().GetNumberOfCells() == 0
    # outward from the free space: it encloses the navigable volume
    mass = vtkMassProperties()
    mass.SetInputData(surface)
    mass.Update()
    assert np.isclose(mass.GetVolume(), field.tet_volumes.sum(), rtol=1e-6)


# --- gmsh ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gmsh():
    try:
        import gmsh
    except OSError as e:   # the wheel's library links the system's X11/OpenGL ones
        pytest.skip(f"gmsh's library cannot load ({e}): apt-get install libglu1-mesa "
                    "libxcursor1 libxft2 libxinerama1")
    gmsh.initialize(readConfigFiles=False, interruptible=False)
    gmsh.option.setNumber("General.Terminal", 0)
    yield gmsh
    gmsh.finalize()


@pytest.mark.parametrize("ext", [".msh", ".mesh"])
def test_gmsh_reads_the_tetrahedra(field, exported, gmsh, ext):
    gmsh.clear()
    gmsh.open(str(exported[ext]))
    tags, coords, _ = gmsh.model.mesh.getNodes()
    points = np.empty((int(tags.max()), 3))
    points[tags.astype(np.int64) - 1] = coords.reshape(-1, 3)
    types, _, nodes = gmsh.model.mesh.getElements(dim=3)
    assert list(types) == [GMSH_TETRA]
    assert_same_tetrahedra(field, points, nodes[0].reshape(-1, 4).astype(np.int64) - 1)


# --- a broken XDMF file: one line naming the file and what is wrong ------------------
@pytest.mark.parametrize("breakage,message", [
    (lambda text: text[:len(text) // 2], "not XML"),
    (lambda text: text.replace('<Topology TopologyType="Tetrahedron"',
                               '<Topology TopologyType="Triangle"'), "TopologyType"),
    (lambda text: text.replace("\n</DataItem>\n</Geometry>",
                               " 1.5\n</DataItem>\n</Geometry>"), "Dimensions"),
], ids=["truncated", "triangles", "extra-number"])
def test_a_broken_xdmf_is_refused_in_one_line(exported, tmp_path, capsys, breakage, message):
    bad = tmp_path / "bad.xdmf"
    bad.write_text(breakage(exported[".xdmf"].read_text()))
    capsys.readouterr()
    assert main(["build", "--from-mesh", str(bad), "-o", str(tmp_path / "out.rgn")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"regn: {bad}:") and message in err and "\n" not in err
    assert not (tmp_path / "out.rgn").exists()
