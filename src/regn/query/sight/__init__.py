"""Segments through the mesh: ``raycast`` and ``raycast_many`` (the walk),
``line_of_sight`` (its segment filter decides most segments from the walls
alone), and the swept-sphere forms of all three."""
