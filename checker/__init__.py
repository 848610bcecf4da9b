"""mlsubmit.checker: reading run logs and checking logs, systems and submission trees."""
