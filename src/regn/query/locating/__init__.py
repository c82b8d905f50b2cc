"""Where a point is: ``locate`` (the fine-grid scan), random points in the
free volume, and the mesh's connected components."""
