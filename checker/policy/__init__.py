"""A project's policy over the checks' findings: profiles as data (which checks run, each code's severity per round;
profiles.py, severity.py, config.py), the project's and the command line's selections and severities on top, and
waivers for what the review granted (waivers.py, waiverfile.py)."""
