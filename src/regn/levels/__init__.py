"""Levels as users have them: triangle soups and voxel grids, built into a
REGN without trusting closure or winding (see docs/building.md, "Levels").

* :func:`read_soup` (.obj .off .ply .stl .glb .gltf), :func:`read_voxels`
  (.npy), :func:`voxels_from_array` — the inputs (:mod:`.readers`);
* :func:`build_level` — the tetrahedra of one box of a level (what a world
  of tiles calls per tile); :func:`generate_level` — the REGN and its report
  (:mod:`.build`); :mod:`.solid` — what is solid; :mod:`.tetra` — the
  adaptive tetrahedra; :mod:`.repairs` — a soup's defects, counted.
"""

from .build import build_level, generate_level
from .readers import Soup, Voxels, read_soup, read_voxels, voxels_from_array

__all__ = [
           "Soup",
           "Voxels",
           "build_level",
           "generate_level",
           "read_soup",
           "read_voxels",
           "voxels_from_array",
]
