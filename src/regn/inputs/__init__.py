"""The loaders: every input file regn reads besides REGN objects.

* :mod:`regn.inputs.obstacles` — obstacle files for the builder: sphere
  lists (``load_spheres``, CSV or JSON) and closed triangle surfaces
  (``load_obstacle_mesh``, any format meshio reads);
* :mod:`regn.inputs.meshes` — tetrahedral meshes (``load_tet_mesh``) and
  the meshio reading every mesh loader shares (``read_meshio``).

Each loader checks what it reads and raises one :mod:`regn.errors` error
naming the file (and the line or item) and what is wrong.
"""
