"""The evidence check: for each metric whose judge quotes evidence, the share of quotes that occur
verbatim in the context (the adapters record the check on every quote: ``verbatim`` true/false, or
null when nothing was checked)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from harness.reports.analysis.data import unit_columns


@dataclass
class EvidenceShare:
    """Quotes a metric's judge gave, and how many occur verbatim."""

    metric: str
    checked: int
    """Quotes with a verbatim check (true or false)."""
    verbatim: int
    """Quotes that occur verbatim."""
    examples: list[tuple[str, str]]
    """(case id, quote) of up to three quotes that do not occur verbatim."""

    @property
    def share(self) -> float | None:
        return self.verbatim / self.checked if self.checked else None


def shares(data) -> list[EvidenceShare]:
    """One entry per metric that quoted evidence, in display order.

    A metric none of whose quotes carries a check is left out: it does not quote evidence.
    """
    cols = unit_columns(data)
    quoted: dict[str, list] = {}   # metric -> (case id, its quotes) of the units with quotes, in table order
    memo: dict[str, list] = {}   # each distinct stored text parsed once ([] most of all)
    for m, cid, quotes in zip(cols["metric"], cols["case_id"], cols["quotes"]):
        if isinstance(quotes, str):   # the stored JSON text (a stand-in's table may hold parsed lists)
            got = memo.get(quotes)
            if got is None:
                got = memo[quotes] = json.loads(quotes)
            quotes = got
        if quotes:
            quoted.setdefault(m, []).append((cid, quotes))
    out = []
    for m in data.metrics:
        checked = verbatim = 0
        bad: list[tuple[str, str]] = []
        for cid, quotes in quoted.get(m, ()):
            for q in quotes:
                v = q.get("verbatim")
                if v is None:
                    continue
                checked += 1
                verbatim += bool(v)
                if not v and len(bad) < 3:
                    bad.append((cid, str(q.get("text", ""))))
        if checked:
            out.append(EvidenceShare(m, checked, verbatim, bad))
    return out
