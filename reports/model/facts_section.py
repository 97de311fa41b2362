"""Behaviour facts (:mod:`harness.reports.analysis.facts`) as the report section the decision table links to."""
from __future__ import annotations

from harness.reports.analysis.behaviours import PROBES
from harness.reports.analysis.facts import FACTS_TITLE, Fact
from harness.reports.model.blocks import Section, Table

SHOWN_BY = 3
"""Case ids named in a row's "shown by" cell; past them the cell gives the count (a run of many copies of a
tagged case keeps a row one line tall)."""


def _few(ids) -> str:
    """The case ids, the first :data:`SHOWN_BY` of them and the count of the rest.

    >>> _few(["a", "b"]), _few([str(i) for i in range(12)])[-18:]
    ('a, b', '0, 1, 2 and 9 more')
    """
    ids = list(ids)
    return ", ".join(ids) if len(ids) <= SHOWN_BY else ", ".join(ids[:SHOWN_BY]) + f" and {len(ids) - SHOWN_BY:,} more"


def section(facts: dict[str, dict[str, Fact]], metrics: list[str], names: dict[str, str]):
    """The report section the decision table links to: every probe's answer per metric, and where it
    came from (the run's cases, or the metric's facts file)."""
    rows = []
    for p in PROBES:
        got = [facts.get(m, {}).get(p.key) for m in metrics]
        if not any(got):
            continue
        shown = sorted({_few(f.cases) + (" (card)" if f.source == "card" else "") for f in got if f})
        rows.append([p.text, " ".join(sorted(p.tags))] + [f.answer if f else "\u2013" for f in got]
                    + ["; ".join(shown)])
    return Section("facts", FACTS_TITLE, [
        "What each metric does on the cases tagged for a behaviour (a case shows a behaviour when it carries "
        "all of its tags); where no case of this run is tagged for it, the metric's facts file beside its card "
        "answers (a reference run of the canonical set). The decision table reads these facts.",
        Table(["behaviour", "tags"] + [names.get(m, m) for m in metrics] + ["shown by"], rows)])
