"""did_you_mean: the closest name, case ignored, never the name itself, nothing when nothing is close."""

from __future__ import annotations

from mlsubmit.core.support.names import did_you_mean


def test_did_you_mean() -> None:
    assert did_you_mean("bret", ["bert", "resnet", "ssd"]) == '; did you mean "bert"?'
    assert did_you_mean("Pod16-Closed", ["pod16-closed", "pod64-open"]) == '; did you mean "pod16-closed"?'
    assert did_you_mean("bert", ["bert"]) == ""  # itself is no suggestion
    assert did_you_mean("gpt9", ["resnet", "ssd"]) == ""
