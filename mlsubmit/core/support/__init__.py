"""Infrastructure every package uses and no domain rule lives in: safe file IO, validated data files, schema loading
and git. Imports only the core (`mlsubmit.core.findings`, `mlsubmit.core.errors`)."""
