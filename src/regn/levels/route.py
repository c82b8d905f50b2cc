"""How :func:`regn.generate` hands a level to this package: obstacles given
beside it are merged in (spheres marked solid, closed triangle meshes added
to the soup), a path is read."""

from __future__ import annotations

import os

import numpy as np

from ..errors import BuildError
from .build import generate_level
from .readers import Soup, Voxels, read_soup


def merged(level, obstacles):
    """``(level, spheres)``: ``level`` (a Soup, Voxels, or a soup file's
    path) with the triangle-mesh obstacles merged into a soup, and the
    spheres apart."""
    if isinstance(level, (str, os.PathLike)):
        level = read_soup(level)
    if not isinstance(level, (Soup, Voxels)):
        raise BuildError("level must be a Soup, Voxels or a level file's path, got "
                         f"{type(level).__name__}")
    spheres, meshes = [], []
    for ob in obstacles:
        (spheres if hasattr(ob, "radius") and hasattr(ob, "centre") else meshes).append(ob)
    if meshes:
        if isinstance(level, Voxels):
            raise BuildError("triangle-mesh obstacles mix with a soup level, not voxels: "
                             "give them as --level files")
        verts, tris, base = [level.verts], [level.tris], len(level.verts)
        for m in meshes:
            verts.append(np.asarray(m.vertices, np.float64))
            tris.append(np.asarray(m.triangles, np.int64) + base)
            base += len(m.vertices)
        level = Soup(np.concatenate(verts), np.concatenate(tris), level.name,
                     level.objects + len(meshes))
    return level, spheres


def generate_with_level(bbox, obstacles, level, **options):
    """:func:`regn.levels.generate_level` of ``level`` and ``obstacles``."""
    level, spheres = merged(level, obstacles)
    return generate_level(bbox, level, spheres=spheres, **options)
