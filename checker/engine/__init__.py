"""The engine of a check run: discovery of what PATHs hold, the registry of checks, and the pipeline that runs them."""
