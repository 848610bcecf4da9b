"""mlperf-logging's rule files: loaded as data, their expressions run through the AST whitelist by our own engine."""
