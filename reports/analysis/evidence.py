"""The evidence check: for each metric whose judge quotes evidence, the share of quotes that occur
verbatim in the context (the adapters record the check on every quote: ``verbatim`` true/false, or
null when nothing was checked)."""
from __future__ import annotations

from dataclasses import dataclass


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
    out = []
    for m in data.metrics:
        u = data.units[data.units["metric"] == m]
        checked = verbatim = 0
        bad: list[tuple[str, str]] = []
        for cid, quotes in zip(u["case_id"].tolist(), u["quotes"].tolist()):
            for q in quotes or []:
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
