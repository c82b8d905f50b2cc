"""The compile jobs by name: the kernel that tells whether each is cached,
the jobs to finish first, and the jobs each command needs (no imports: the
parent process reads this; the jobs themselves are in :mod:`.jobs`)."""

#: name -> (kernel module, kernel name that shows the job is cached, jobs to
#: finish first: they compile helpers this job's kernels share, so running
#: them at once would compile those twice)
JOBS = {
    "build": ("regn.geometry._star_kernels", "certify", ()),
    "verify": ("regn.checks._kernels", "tet_measures", ("build",)),
    "locate": ("regn.query.walls._nearest_kernels", "nearest_walls_grid", ()),
    "paths": ("regn.query.paths._turning_points_kernels", "simplify", ()),
    "sight": ("regn.query.sight._segment_filter_kernels", "segments_clear", ("locate",)),
    "batch": ("regn.query.paths._field_kernels", "search_from_goal", ("paths",)),
    "radius": ("regn.query.radius._keep_clear_kernels", "smooth_keeping",
               ("paths", "locate")),
}

#: what ``mesh.prepare()`` (and ``regn serve``) needs, and what ``regn demo`` needs
QUERY_JOBS = ("locate", "paths", "sight", "batch")
DEMO_JOBS = ("build", "paths", "locate", "verify", "radius")
