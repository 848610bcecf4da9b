"""Fixtures and demo helpers: run logs written with mlperf-logging's own logger, small organisation trees, the
packaging example and its git repository. Used by the tests, `make demo` and the benchmarks; nothing in the
product imports this package (an import-linter contract keeps it so)."""
