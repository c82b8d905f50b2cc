"""The loaders: every file regn reads, one validating loader per kind.

* :mod:`regn.inputs.maps` — the bytes of a map file, read whole or, for a
  device, a pipe or an oversized file, only as far as its headers say;
* :mod:`regn.inputs.arrays` — ``.npy`` arrays, the header checked against
  the file's size and the dtype against what the caller takes;
* :mod:`regn.inputs.points` — point and segment lists (``.npy`` or text),
  read a block at a time with line numbers;
* :mod:`regn.inputs.obstacles` — obstacle files for the builder: sphere
  lists (``load_spheres``, CSV or JSON) and closed triangle surfaces
  (``load_obstacle_mesh``, any format meshio reads);
* :mod:`regn.inputs.meshes` — tetrahedral meshes (``load_tet_mesh``) and
  the meshio reading every mesh loader shares (``read_meshio``).

Each loader checks what it reads and raises one :mod:`regn.errors` error
naming the file (and the line or item) and what is wrong, and records the
file as an input of the running command (:func:`regn._atomic.note_input`),
so that no command writes over it.
"""
