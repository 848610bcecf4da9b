"""Every touch of mlperf-logging's internals, and nothing else: where its files are and which release it is
(`installed.py`), and its RCP checker run on logs already read (`rcp.py`, with `rcp_fit.py` saying whether the
installed module fits that adapter and `rcp_plain.py` running it as it is when it does not). What that RCP code
asks of numpy and scipy is here too, without importing either (`npstats.py`, `tstat.py`).

Other subpackages read mlperf-logging's shipped data (rule files, RCP files) through the folders named here, and
never import mlperf_logging themselves; an import-linter contract and tests/unit/checker/upstream/test_upstream.py
hold it so. Its public `mllog` API, which writes test fixtures, is used by the test fixtures (tests/fixtures/) alone.
"""
