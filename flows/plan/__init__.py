"""Planning a sweep: the experiment spec, its variants, the stage graph, pre-run checks."""
