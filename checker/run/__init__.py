"""Running a check: options and profiles, discovery of what PATHs hold, the plan, the worker pool and the cache."""
