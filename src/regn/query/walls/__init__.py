"""The nearest wall: its distance, closest point, face and normal, and the
closest navigable point (the wall grid and the BVH of the wall triangles)."""
