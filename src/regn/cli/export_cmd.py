"""``regn export FILE OUT.ext``: the mesh in another format, chosen by extension."""

from __future__ import annotations

import os

from ._common import add_json_option, check_output, load_mesh, report_written

DESCRIPTION = """Write the mesh in the format OUT's extension names:
.vtu .vtk .msh .xdmf .mesh  the tetrahedra (meshio) with cell data volume,
                            component, cells_listing;
  with --grid (or OUT named *.grid.<ext>, e.g. field.grid.vtu) the grid as
                            hexahedra with ref_count / occupied instead;
  .xdmf is one XML file, data inline (VTK, pyvista and
                            regn build --from-mesh read it; meshio does not);
.obj .ply .stl              the boundary surface, normals out of the
                            navigable volume (into the asteroids, out of the box);
  also .vtu .vtk with --surface;
  --groups: one group per rock (asteroid_001, the largest first; asteroids
  that touch or overlap are one rock: one connected surface) and per
  box wall (box_xmin ... box_zmax): 'o'/'g' in OBJ (Blender's importer makes
  one object of each), the face property / cell data 'group' in PLY / VTU
  (0-5 the walls in that order, 6 on the asteroids);
  --units km: coordinates in kilometres (Blender clips a 100 km scene in metres);
.npz                        every array; .json the header plus every array;
.png / .html                the default picture / interactive view.
OUT is written atomically (temporary file, then rename); an existing OUT is
replaced only with --force, and never when it is FILE itself."""


def add_parser(sub, name, help_text):
    import argparse
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="REGN file to read")
    p.add_argument("out", help="output file; its extension picks the format")
    p.add_argument("--grid", action="store_true",
                   help="write the grid (hexahedra) instead of the tetrahedra")
    p.add_argument("--surface", action="store_true",
                   help="write the boundary surface to .vtu/.vtk instead of the tetrahedra")
    p.add_argument("--groups", action="store_true",
                   help="split the surface per rock (touching asteroids are one) and per box wall")
    p.add_argument("--units", choices=("m", "km"), default="m",
                   help="length unit of a surface's coordinates (default m)")
    p.add_argument("--force", action="store_true", help="overwrite an existing OUT")
    add_json_option(p, "what was written")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import ExportError
    from ..export import ALL_EXTS, export, extension, unknown_extension_message
    if extension(args.out) not in ALL_EXTS:     # fail before reading the input
        raise ExportError(unknown_extension_message(args.out))
    check_output(args.out, [args.file], args.force)
    mesh = load_mesh(args.file)
    if getattr(mesh, "is_world", False):        # a manifest: every tile in one file
        from ..world.drawing import export_world
        if args.grid or args.surface or args.groups or args.units != "m":
            raise ExportError(f"export: {args.file} is a world: it is written as one "
                              "volume file of its tiles (no --grid/--surface/--groups/--units)")
        kind = export_world(mesh, args.out)
    else:
        kind = export(mesh, args.out, grid=True if args.grid else None, surface=args.surface,
                      groups=args.groups, units=args.units)
    size = os.path.getsize(args.out)
    report_written(args, {"output": args.out, "bytes": size, "kind": kind},
                   f"wrote {args.out}: {kind}, {size} bytes")
    return 0
