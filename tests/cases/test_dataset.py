"""The canonical dataset is what its builder makes, and covers what the issue asks for."""
import subprocess
import sys

from tests.conftest import ROOT


def test_canonical_jsonl_is_what_the_builder_makes():
    out = subprocess.run([sys.executable, "datasets/build_canonical.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_canonical_set_probes_the_required_behaviours(canonical):
    assert len(canonical) >= 18
    cookie = canonical.by_id("cookie-yield")
    assert [c.label for c in cookie.annotation.claims] == ["supported"] * 3 + ["not_found"]
    assert all(c.evidence for c in cookie.annotation.claims[:3])
    assert canonical.by_id("empty-answer").answer == ""
    refund = canonical.by_id("refund-invented")
    assert sorted(c.label for c in refund.annotation.claims) == ["not_found"] * 2 + ["supported"] * 3
    multi = canonical.by_id("multi-hop").annotation.claims[0]
    assert len({e.context_id for e in multi.evidence}) == 2
    answerable = canonical.by_id("abstain-answerable").annotation
    unanswerable = canonical.by_id("abstain-unanswerable").annotation
    assert (answerable.abstention, answerable.answerable) == (True, True)
    assert (unanswerable.abstention, unanswerable.answerable) == (True, False)
    mis = canonical.by_id("citation-misattributed").annotation.claims
    assert any(c.cited_context_id and c.cited_context_id not in {e.context_id for e in c.evidence} for c in mis)
    assert any("inference" in {c.label for c in case.annotation.claims} for case in canonical)
