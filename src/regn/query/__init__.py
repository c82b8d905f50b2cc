"""Navigation queries over a :class:`regn.mesh.Mesh`, one folder per thing a
user asks for, lowest first (each folder imports only those above it here):

* :mod:`.locating` — which tetrahedron holds a point (``locate``), random
  free points, connected components;
* :mod:`.walls` — the nearest wall: ``distance_to_wall``, ``nearest_wall``,
  ``nearest`` (the closest navigable point);
* :mod:`.sight` — segments: ``raycast``, ``raycast_many``,
  ``line_of_sight`` (the walk and its segment filter), and their swept-sphere
  forms;
* :mod:`.paths` — ``find_path`` (search, smoother, waypoints, landmark
  bounds), ``find_paths``, ``cost_field``, partial paths and
  ``QueryFilter`` blockers;
* :mod:`.radius` — agents with a radius: the portals' clearances and the
  sphere's paths, its smoother, and where a sphere fits (``nearest`` and
  ``random_points`` with ``radius=``).

:mod:`.common` holds what all of them share: the checks of query arguments
and the per-mesh scratch cache. Each folder keeps its compiled kernels in
``_*_kernels.py`` modules beside the facade that calls them.
"""
