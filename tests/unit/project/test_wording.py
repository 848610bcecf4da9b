"""Wording a user reads: every pointer leads somewhere, and each fact is said once, in words that do not contradict."""

from __future__ import annotations

import re
from pathlib import Path

from mlsubmit.core.codes import catalogue

ROOT = Path(__file__).resolve().parents[3]


def test_every_pointer_in_the_catalogue_leads_to_a_document_and_heading() -> None:
    # RULE005 sent readers to "`mlsubmit explain RULE005` notes in the README", which did not exist
    for info in catalogue().values():
        text = " ".join([info.explanation, info.hint, *info.references])
        assert "notes in the README" not in text, info.code
        for ref in info.references:
            found = re.fullmatch(r'(docs/[\w./-]+\.md)(?: "(.+)")?', ref)
            if found is None:
                continue  # a policy section or a URL
            doc = ROOT / found.group(1)
            assert doc.is_file(), (info.code, ref)
            if found.group(2):
                headings = {h.strip() for h in re.findall(r"^#+ (.+)$", doc.read_text(encoding="utf-8"), re.M)}
                assert found.group(2) in headings, (info.code, ref)
