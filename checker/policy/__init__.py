"""A project's policy over the checks' findings: waivers for what the review granted (waivers.py, waiverfile.py)."""
