"""``regn export FILE OUT.ext``: the mesh in another format, chosen by extension."""

from __future__ import annotations

import os

from ._common import load_mesh

DESCRIPTION = """Write the mesh in the format OUT's extension names:
.vtu .vtk .msh .xdmf .mesh  the tetrahedra (meshio) with cell data volume,
                            component, cells_listing;
  with --grid (or OUT named *.grid.<ext>, e.g. field.grid.vtu) the grid as
                            hexahedra with ref_count / occupied instead;
  .xdmf is one XML file, data inline (VTK, pyvista and
                            regn build --from-mesh read it; meshio does not);
.obj .ply .stl              the boundary surface, normals out of the
                            navigable volume (into the asteroids, out of the box);
.npz                        every array; .json the header plus every array;
.png / .html                the default picture / interactive view.
The file is written atomically (temporary file, then rename)."""


def add_parser(sub, name, help_text):
    import argparse
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="REGN file to read")
    p.add_argument("out", help="output file; its extension picks the format")
    p.add_argument("--grid", action="store_true",
                   help="write the grid (hexahedra) instead of the tetrahedra")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..export import export, extension, ALL_EXTS, unknown_extension_message
    from ..errors import ExportError
    if extension(args.out) not in ALL_EXTS:     # fail before reading the input
        raise ExportError(unknown_extension_message(args.out))
    mesh = load_mesh(args.file)
    kind = export(mesh, args.out, grid=True if args.grid else None)
    size = os.path.getsize(args.out)
    print(f"wrote {args.out}: {kind}, {size} bytes")
    return 0
