"""Cost per metric from the ledger (the ``cells`` table): judge calls, tokens and latency per answer (the
time in the judge of the metric's own calls, not the run's queue: :func:`latency`),
tokens billed upstream and served from the cache kept apart, retried attempts, and money from the
price table the user supplied (``harness run|report --prices FILE`` or ``--price-in/--price-out``;
no built-in prices)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.judge.accounting import parse_prices

BILLED = ("billed_prompt_tokens", "billed_completion_tokens", "cached_prompt_tokens", "cached_completion_tokens",
          "usage_missing", "retries", "cache_hits")


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
    """Latency per answer: the median over answers of the time in the judge of the metric's own calls
    (``judge_ms``: sent to answered, the run's queue and the pace's waits left out; calls answered from the
    cache not timed); for a metric that calls no judge, its own compute time; for a store written before
    ``judge_ms``, the gateway's time per answer, queue included (``latency_basis`` says which)."""
    total_calls: int
    total_tokens: int
    cache_hits: int
    min_calls: int
    max_calls: int
    billed_tokens: int = 0
    """Tokens the upstream judge served live (what it bills), summed over the answers."""
    cached_tokens: int = 0
    """Tokens served from the cache, summed."""
    money_per_answer: float | None = None
    """Billed tokens at the user's price for the judge model, per answer; None without a price."""
    latency_p90_ms: float | None = None
    """The 90th percentile of the same per-answer figure (None for a store written before ``judge_ms``)."""
    latency_basis: str = "judge"
    """What ``latency_ms`` measures: ``judge`` (time in the judge), ``compute`` (a metric that calls no judge:
    its own compute time) or ``gateway`` (an older store: the gateway's time, the run's queue included)."""
    timed_answers: int = 0
    """Answers with at least one call the judge answered live (the ones the latency figures are over)."""

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Totals:
    """The run's judge traffic, as the header shows it."""

    calls: int
    prompt_tokens: int
    """Billed upstream (live replies)."""
    completion_tokens: int
    """Billed upstream."""
    cached_tokens: int
    cache_hits: int
    retries: int
    """Upstream attempts beyond the first (transport faults retried)."""
    usage_missing: int
    """Live replies without usage: their tokens are unknown, not counted."""
    money: float | None = None
    """Billed tokens at the user's price; None without a price for the judge model."""
    price_note: str = ""

    def __iter__(self):   # (calls, billed prompt, billed completion), as before
        return iter((self.calls, self.prompt_tokens, self.completion_tokens))


def _col(d, name):
    return d[name] if name in d else 0


def judge_price(data):
    """(Price or None, note) for the run's judge model from the price table in the run spec."""

    spec = data.spec or {}
    table = spec.get("prices") or {}
    model = (spec.get("judge") or {}).get("model")
    if not table.get("models"):
        return None, "no price table given (pass --prices FILE or --price-in/--price-out; no built-in prices)"
    prices = parse_prices(table["models"], table.get("source") or "prices")
    if model not in prices:
        return None, f"the price table ({table.get('source')}) has no price for judge model {model!r}"
    p = prices[model]
    return p, f"{model}: {p.input:g} in / {p.output:g} out per million tokens ({table.get('source')})"


def steady(latencies) -> tuple[float, int]:
    """(mean judge latency per answer, one-time loading left out; cells left out). A cell whose latency is
    over five times the median and over a second above it waited for a one-time load (an embedded model's
    first load, a vendor's first client), which a long run pays once, not per answer.

    >>> steady([10.0, 12.0, 11.0, 6300.0])
    (11.0, 1)
    >>> steady([])
    (0.0, 0)
    """
    xs = sorted(float(x) for x in latencies)
    if not xs:
        return 0.0, 0
    med = spread(xs)[0]
    kept = [x for x in xs if not (x > 5 * med and x > med + 1000.0)]
    return sum(kept) / len(kept), len(xs) - len(kept)


def spread(values) -> tuple[float, float]:
    """(median, 90th percentile) of per-answer figures, linear between the order statistics; (0, 0) when empty.

    >>> spread([10.0, 20.0, 30.0, 40.0, 1000.0])
    (30.0, 616.0)
    >>> spread([])
    (0.0, 0.0)
    """
    xs = sorted(float(x) for x in values)
    if not xs:
        return 0.0, 0.0

    def q(p: float) -> float:
        pos = p * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    return round(q(0.5), 6), round(q(0.9), 6)


LATENCY_BASIS = {
    "judge": "time in the judge of the metric's own calls",
    "compute": "the metric's own compute time (it calls no judge)",
    "gateway": "the gateway's time, the run's queue included (store written before judge time was kept)",
}
"""What each ``Cost.latency_basis`` means, as the reports say it."""


def latency(d, uses_judge: bool = True) -> tuple[float, float | None, str, int]:
    """(median ms per answer, p90 or None, basis, answers timed) of one metric's cells ``d``: the time in the
    judge of each answer's own live calls (``judge_ms``); answers every call of which came from the cache are
    left out (counted apart, as cache hits). A store without ``judge_ms``: the gateway's time per answer as
    before (:func:`steady`), basis ``gateway``."""
    if "judge_ms" not in d or d["judge_ms"].isna().all():
        return steady(d["latency_ms"])[0], None, "gateway", len(d)
    live = d[(d["calls"] > d["cache_hits"]) & d["judge_ms"].notna()]
    med, p90 = spread(live["judge_ms"])
    return med, p90, "judge" if uses_judge else "compute", len(live)


def per_metric(data) -> list[Cost]:
    """Cost per metric, in display order (not-applicable cells do not count as answers)."""
    df = data.cells
    price, _ = judge_price(data)
    out = []
    for m in data.metrics:
        d = df[(df["metric"] == m) & (df["status"] != "not_applicable")]
        n = len(d)
        if n == 0:
            out.append(Cost(m, 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0))
            continue
        bp, bc = int(_col(d, "billed_prompt_tokens").sum()), int(_col(d, "billed_completion_tokens").sum())
        cached = int((_col(d, "cached_prompt_tokens") + _col(d, "cached_completion_tokens")).sum())
        money = price.cost(bp, bc) / n if price is not None else None
        info = (getattr(data, "info", None) or {}).get(m)
        med, p90, basis, timed = latency(d, info.uses_judge if info is not None else True)
        out.append(Cost(m, n, float(d["calls"].mean()), float(d["prompt_tokens"].mean()),
                        float(d["completion_tokens"].mean()), med,
                        int(d["calls"].sum()), int((d["prompt_tokens"] + d["completion_tokens"]).sum()),
                        int(d["cache_hits"].sum()), int(d["calls"].min()), int(d["calls"].max()),
                        bp + bc, cached, money, p90, basis, timed))
    return out


def totals(data) -> Totals:
    """The whole run's judge traffic: billed tokens (what the judge served live, as its ``usage``
    said), cached tokens and retried attempts apart, and money at the user's price."""
    df = data.cells
    price, note = judge_price(data)
    bp, bc = int(_col(df, "billed_prompt_tokens").sum()), int(_col(df, "billed_completion_tokens").sum())
    cached = int((_col(df, "cached_prompt_tokens") + _col(df, "cached_completion_tokens")).sum())
    return Totals(int(df["calls"].sum()), bp, bc, cached, int(df["cache_hits"].sum()), int(df["retries"].sum()),
                  int(_col(df, "usage_missing").sum()), price.cost(bp, bc) if price is not None else None, note)


def traffic_line(t: Totals) -> str:
    """The header's one line on judge traffic: billed tokens (what the judge served), cached and
    retried apart, and money when a price was given.

    >>> traffic_line(Totals(10, 900, 100, 50, 2, 1, 1, 0.5, "m: 1 in / 2 out"))
    'tokens billed: 1,000 (900 prompt, 100 completion) · from the cache: 50 tokens, 2 calls · retried attempts: 1 · 1 live reply without usage (tokens unknown) · money: 0.5 (m: 1 in / 2 out)'
    """
    parts = [f"tokens billed: {t.prompt_tokens + t.completion_tokens:,} ({t.prompt_tokens:,} prompt, "
             f"{t.completion_tokens:,} completion)",
             f"from the cache: {t.cached_tokens:,} tokens, {t.cache_hits:,} calls", f"retried attempts: {t.retries:,}"]
    if t.usage_missing:
        parts.append(f"{t.usage_missing:,} live repl{'y' if t.usage_missing == 1 else 'ies'} without usage "
                     "(tokens unknown)")
    parts.append(f"money: {money(t.money)} ({t.price_note})")
    return " \u00b7 ".join(parts)


def money(v: float | None) -> str:
    """Money as shown in reports (no currency: the price table's unit).

    >>> money(0.000123456), money(12.5), money(None)
    ('0.000123', '12.50', 'n/a')
    """
    if v is None:
        return "n/a"
    return f"{v:.2f}" if v >= 1 else f"{v:.3g}"
