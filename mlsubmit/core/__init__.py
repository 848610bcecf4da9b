"""The foundation every other layer stands on: the finding model (`findings`), the finding catalogue (`codes` and
its `codes/*.yaml`), the errors a command exits on (`errors`), the folding of repeated findings (`repeats`), and the
support a checker needs (`support/`: safe reading, data files checked by schemas, git, atomic writes, cache entries).

It imports nothing of the checker, the submission or the command line (import-linter's layers contract).
"""
