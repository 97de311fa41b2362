"""Cost per metric from the ledger (the ``cells`` table): judge calls, tokens and latency per answer."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Cost:
    """One metric's judge traffic, averaged over the answers it judged."""

    metric: str
    answers: int
    """Cells that reached the judge or could have (not-applicable cells excluded)."""
    calls: float
    """Judge calls per answer."""
    prompt_tokens: float
    completion_tokens: float
    latency_ms: float
    """Summed judge latency per answer, as the gateway measured it."""
    total_calls: int
    total_tokens: int
    cache_hits: int
    min_calls: int
    max_calls: int

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens


def per_metric(data) -> list[Cost]:
    """Cost per metric, in display order (not-applicable cells do not count as answers)."""
    df = data.cells
    out = []
    for m in data.metrics:
        d = df[(df["metric"] == m) & (df["status"] != "not_applicable")]
        n = len(d)
        if n == 0:
            out.append(Cost(m, 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0))
            continue
        out.append(Cost(m, n, float(d["calls"].mean()), float(d["prompt_tokens"].mean()),
                        float(d["completion_tokens"].mean()), float(d["latency_ms"].mean()),
                        int(d["calls"].sum()), int((d["prompt_tokens"] + d["completion_tokens"]).sum()),
                        int(d["cache_hits"].sum()), int(d["calls"].min()), int(d["calls"].max())))
    return out


def totals(data) -> tuple[int, int, int]:
    """(judge calls, prompt tokens, completion tokens) over the whole run."""
    df = data.cells
    return int(df["calls"].sum()), int(df["prompt_tokens"].sum()), int(df["completion_tokens"].sum())
