"""``harness run --estimate``: what a run will cost before any judge call.

Each metric's own code runs on a sample of the cases against the offline reference judge, so each
vendor renders its real prompts (its templates, its steps, its re-asks) and nothing is sent to the
real judge. Every rendered request and reply is counted as a judge would bill it: words and
punctuation marks, plus 3 tokens per message (close to a BPE tokenizer on English prose; a model's own
tokenizer may count 10-30% differently). Per-answer means over the sample, times the number of cases,
give the calls, tokens and money per metric, and the time at a given concurrency and latency.

The reference judge needs annotated cases. For unannotated cases the canonical set stands in, scaled
by the ratio of the cases' text size (question, passages, answer) to the canonical set's: a rougher
figure, and the output says so.
"""
from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass, replace

from harness.cases.defaults import packaged_cases
from harness.cases.load import CaseSet, load_cases
from harness.judge.reference import unannotated
from harness.judge.responses_api import chat_view, completion_view, is_responses
from harness.run.runner import JudgeConfig, run
from harness.store.runstore import RunStore

PER_MESSAGE = 3
_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Words and punctuation marks.

    >>> count_tokens("Bake at 350 F."), count_tokens("")
    (5, 0)
    """
    return len(_TOKEN.findall(text or ""))


def _text(content) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def request_tokens(body: dict) -> int:
    """A request's prompt tokens: its messages' words and punctuation, plus 3 per message.

    >>> request_tokens({"messages": [{"role": "user", "content": "Hi there."}]})
    6
    """
    msgs = body.get("messages") or []
    return count_tokens(" ".join(_text(m.get("content")) for m in msgs if isinstance(m, dict))) + PER_MESSAGE * len(msgs)


class Recount:
    """An upstream wrapper: the reference judge answers, the usage is recounted by :func:`request_tokens`."""

    def __init__(self, upstream):
        self.inner = upstream
        self.kind, self.model = upstream.kind, upstream.model

    def scope(self, cell):
        return self.inner.scope(cell)

    async def aclose(self):
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, cell, body: dict) -> dict:
        resp = await self.inner.complete(cell, body)
        if is_responses(body):   # a Responses API request and its ``response``: counted as the chat they amount to
            content = completion_view(resp)["choices"][0]["message"]["content"] or ""
            pt, ct = request_tokens(chat_view(body)), count_tokens(_text(content))
            return {**resp, "usage": {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct}}
        content = ((resp.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        pt, ct = request_tokens(body), count_tokens(_text(content))
        return {**resp, "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}


@dataclass(frozen=True)
class MetricEstimate:
    """One metric's expected judge traffic per answer."""

    metric: str
    calls: float
    prompt_tokens: float
    completion_tokens: float

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Estimate:
    """The whole estimate."""

    cases: int
    """Cases the run would score."""
    sample: int
    """Cases whose prompts were rendered."""
    proxy: bool
    """True: the canonical set stood in (unannotated cases), scaled by ``scale``."""
    scale: float
    metrics: tuple[MetricEstimate, ...]
    repeats: int = 1


def sample_of(cases: list, n: int) -> list:
    """At most ``n`` cases, evenly spread over the list (deterministic).

    >>> sample_of(list(range(10)), 3), sample_of([1, 2], 5)
    ([0, 3, 6], [1, 2])
    """
    if len(cases) <= n:
        return list(cases)
    step = len(cases) / n
    return [cases[int(i * step)] for i in range(n)]


def _size(case) -> int:
    return count_tokens(" ".join([case.question, case.answer] + [c.text for c in case.contexts]))


def estimate(opts, sample: int = 30) -> Estimate:
    """The estimate for a run of ``opts`` (a :class:`harness.run.runner.RunOptions`), sending nothing to
    its judge: the metrics run on ``sample`` cases in a temporary directory against the reference judge."""
    cases = list(opts.cases)
    proxy = bool(unannotated(cases)) if cases else True
    basis = load_cases(packaged_cases()) if proxy else cases
    chosen = sample_of(list(basis), sample)
    scale = 1.0
    if proxy and cases:
        scale = (sum(map(_size, cases)) / len(cases)) / (sum(map(_size, chosen)) / len(chosen))
    with tempfile.TemporaryDirectory(prefix="harness-estimate-") as tmp:
        sub = replace(opts, cases=CaseSet("(estimate sample)", tuple(chosen), "estimate"),
                      judge=JudgeConfig(), cache_mode="live", cache_path=None, out_dir=tmp, run_id="estimate",
                      progress=False, upstream_wrapper=Recount, workers=1, ray=None, repeats=1)
        out = run(sub)
        store = RunStore.open(out.store_path)
        try:
            df = store.cells()
        finally:
            store.close()
    per = []
    for m in opts.metrics:
        d = df[(df["metric"] == m) & (df["status"] != "not_applicable")]
        if not len(d):
            per.append(MetricEstimate(m, 0.0, 0.0, 0.0))
            continue
        per.append(MetricEstimate(m, float(d["calls"].mean()), float(d["prompt_tokens"].mean()) * scale,
                                  float(d["completion_tokens"].mean()) * scale))
    return Estimate(len(cases), len(chosen), proxy, scale, tuple(per), getattr(opts, "repeats", 1))


def lines(est: Estimate, shorts: dict[str, str], price=None, concurrency: int = 8,
          latency_s: float = 1.0) -> list[str]:
    """The estimate as the terminal prints it."""
    n = est.cases * est.repeats
    w = max([len(s) for s in shorts.values()] + [6])
    out = [f"estimate: {est.cases} case(s) x {est.repeats} repeat(s); prompts rendered for {est.sample} case(s) "
           "against the offline reference judge, nothing sent to the judge; tokens counted as words and "
           f"punctuation + {PER_MESSAGE} per message"]
    if est.proxy:
        out.append(f"  the cases carry no annotation: the canonical set stands in, scaled by their text size "
                   f"(x{est.scale:.2f}); a rough figure")
    out.append(f"  {'metric':{w}}  {'calls/ans':>9}  {'tokens/ans':>10}  {'calls':>9}  {'tokens':>12}  money")
    tc = tt = 0.0
    money_total = 0.0 if price is not None else None
    for e in est.metrics:
        calls, tok = e.calls * n, e.tokens * n
        tc, tt = tc + calls, tt + tok
        money = price.cost(e.prompt_tokens * n, e.completion_tokens * n) if price is not None else None
        if money is not None:
            money_total += money
        out.append(f"  {shorts.get(e.metric, e.metric):{w}}  {e.calls:9.1f}  {e.tokens:10,.0f}  {calls:9,.0f}  "
                   f"{tok:12,.0f}  {'n/a' if money is None else f'{money:.4g}'}")
    hours = tc * latency_s / max(1, concurrency) / 3600
    out.append(f"  {'total':{w}}  {'':9}  {'':10}  {tc:9,.0f}  {tt:12,.0f}  "
               f"{'n/a (no price given)' if money_total is None else f'{money_total:.4g}'}")
    out.append(f"  time: at most {_duration(hours)} at {latency_s:g} s per judge call and {concurrency} cell(s) in "
               "flight (calls of one cell sent in parallel by a vendor finish sooner)")
    return out


def _duration(hours: float) -> str:
    """
    >>> _duration(0.01), _duration(2.5)
    ('36 s', '2.5 h')
    """
    if hours < 1 / 60:
        return f"{math.ceil(hours * 3600)} s"
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h"
