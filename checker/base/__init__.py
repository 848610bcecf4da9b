"""The floor under the checks: what a check is given and works with (options, targets, the Check contract and its
stages, the worker pool, the cache codec, the run ledger's storage). It imports no check at module level; the few
imports of checks inside its functions are named in pyproject's layers contract."""
