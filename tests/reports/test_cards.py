"""The committed metric cards (reports/cards/) must be what `harness cards` generates now, from a
fresh reference-judge run of the canonical set."""
from __future__ import annotations

import os
import re

from harness.reports.cards.generate import generate, write_cards

import pytest

from tests.conftest import ROOT
from tests.helpers.synthetic import canonical_run

CARDS = os.path.join(ROOT, "reports", "cards")
SECTIONS = ("## Description", "## How to Use", "### Inputs", "### Output Values", "### Values from Popular Papers",
            "## Examples", "## Unit of Judgement and Verdicts", "## Degenerate Inputs", "## Judge Calls per Answer",
            "## Cost and Quality", "## Judge Stability", "## Shims", "## Limitations and Bias", "## Citation", "## Further References", "## Changelog")


@pytest.fixture(scope="module")
def cards():
    run_dir, _ = canonical_run()
    return generate(run_dir)


def test_committed_cards_are_current(cards):
    stale = write_cards(cards, CARDS, check=True)
    assert not stale, f"stale metric cards {stale}: run `.venv/bin/harness cards` and commit reports/cards/"


def test_one_card_per_registered_metric(cards):
    from harness.metric import registry

    assert sorted(n for n in cards if n.endswith(".md")) == sorted(f"{m}.md" for m in registry.names())
    assert sorted(n for n in cards if n.endswith(".facts.json")) == sorted(f"{m}.facts.json" for m in registry.names())


def test_cards_have_every_section_and_no_run_specifics(cards):
    for name, text in cards.items():
        if not name.endswith(".md"):
            continue
        positions = [text.find(s + "\n") for s in SECTIONS]
        assert all(p >= 0 for p in positions), (name, [s for s, p in zip(SECTIONS, positions) if p < 0])
        assert positions == sorted(positions), name
        assert "_Not written yet._" not in text and "_No description written yet._" not in text, name
        assert "/tmp" not in text and ROOT not in text and "canonical/" not in text, name
        assert not re.search(r"20\d\d-\d\d-\d\dT", text), name


def test_behaviour_lines_cite_case_and_value(cards):
    """The classic discrepancy, as each card states it."""
    def line(card, probe):
        return next(l for l in cards[card].splitlines() if l.startswith(f"| {probe} |"))

    probe = "passes a plausible claim that no passage states and none contradicts"
    assert line("deepeval.faithfulness.md", probe) == f"| {probe} | **yes** | cookie-yield | 1.00 |"
    assert line("inhouse.span.md", probe) == f"| {probe} | **no** | cookie-yield | 0.75 |"
    assert line("deepeval.faithfulness_penalized.md", probe) == f"| {probe} | **no** | cookie-yield | 0.75 |"
    ab = "scores as grounded an abstention although the passages hold the answer"
    assert line("trulens.groundedness.md", ab).startswith(f"| {ab} | **yes** | abstain-answerable | 1.00\\* |")
    assert line("trulens.groundedness_answerability.md", ab).startswith(f"| {ab} | **no** | abstain-answerable |")
    assert "| 2 calls: " not in cards["deepeval.faithfulness.md"]
    assert "- 2 calls: 21 cases" in cards["inhouse.span.md"]


def test_check_mode_reports_a_stale_card(cards, tmp_path):
    write_cards(cards, str(tmp_path))
    assert write_cards(cards, str(tmp_path), check=True) == []
    victim = tmp_path / "inhouse.span.md"
    victim.write_text(victim.read_text() + "edited\n")
    (tmp_path / "gone.metric.md").write_text("old card\n")
    assert write_cards(cards, str(tmp_path), check=True) == ["inhouse.span.md", "gone.metric.md"]


def test_every_card_shows_the_frontier_plot(cards):
    """The cost-quality frontier of the canonical run is a file beside the cards, and every card shows it."""
    assert cards["frontier.svg"].startswith("<svg ") and "Pareto front" in cards["frontier.svg"]
    for name, text in cards.items():
        if name.endswith(".md"):
            assert "](frontier.svg)" in text and "Pareto front" in text, name
