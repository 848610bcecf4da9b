"""mlsubmit.submission: building submission trees, manifests and archives."""
