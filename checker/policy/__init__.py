"""The policy a check run applies: profiles as data (which checks run, each code's severity per round), the
project's and the command line's selections and severities on top, and what the review granted."""
