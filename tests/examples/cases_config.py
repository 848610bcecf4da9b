"""Examples of the files a command is given beside the logs: waiver files (WVR), checked with the RULE003 example
(a warning at line 3) as the log they waive findings of."""

from __future__ import annotations

from examplelog import Example

LOG = "negative/RULE003-same-org-twice.txt"
ARGV = ["check", "--ruleset", "1.0.0", "--no-project-waivers", "--waivers", "{file}", LOG]


def _waiver(code: str, expires: str) -> bytes:
    return f"""# What the review granted for the example runs.

[[waiver]]
code = "{code}"
path = "negative/RULE003-*.txt"
reason = "submission_org is logged twice by the launcher and the training script"
reference = "https://github.com/example/our-submission/issues/7"
who = "results lead"
expires = {expires}
""".encode()


def waivers() -> list[Example]:
    return [
        Example("WVR001", "matches-nothing", "a waiver for RULE002 where the log has RULE003: it waives nothing",
                ARGV, _waiver("RULE002", "2099-12-31"), _waiver("RULE003", "2099-12-31"), ext="toml", line=3),
        Example("WVR002", "expired", "a waiver that expired on 2026-06-30: it waives nothing now",
                ARGV, _waiver("RULE003", "2026-06-30"), _waiver("RULE003", "2099-12-31"), ext="toml", line=3),
    ]
