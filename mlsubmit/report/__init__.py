"""`mlsubmit report`'s engine: scores (olympic means, RCP scaling), the report's inputs (system files, prices),
its data, and the ways it is written (text and Markdown tables, JSON, one self-contained HTML page)."""
