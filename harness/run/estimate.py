"""``harness run --estimate``: what a run will cost before any judge call.

Each metric's own code runs on a sample of the cases against the offline reference judge, so each
vendor renders its real prompts (its templates, its steps, its re-asks) and nothing is sent to the
real judge. Every rendered request and reply is counted as a judge would bill it: words and
punctuation marks, plus 3 tokens per message (close to a BPE tokenizer on English prose; a model's own
tokenizer may count 10-30% differently). Per-answer means over the sample, times the number of cases,
give the calls, tokens and money per metric, and the time at a given concurrency and latency.

The reference judge needs annotated cases. An unannotated case (a team's own data) gets stand-in labels for the
estimate only (:func:`stand_in`): each sentence of its answer a claim, supported by the passage sentence that
shares most words with it (not found where none shares any). The vendors then render their prompts on the team's
own questions, passages and answers, so a long passage or a many-sentence answer costs what it will cost, and a
metric that does not apply (a citation check on answers with no markers) costs nothing.

Calls that sibling metrics share through the judge cache (the same request, sent by two metrics of one vendor)
are billed once when the run will use the cache (a real judge's default): the estimate runs with a cache of its
own then, and counts a cache hit as no call and no token.
"""
from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass, replace

from harness.cases.defaults import packaged_cases
from harness.cases.load import CaseSet, load_cases
from harness.core.records import Annotation, Claim, Evidence
from harness.judge.reference import unannotated
from harness.judge.responses_api import chat_view, completion_view, is_responses
from harness.run.runner import JudgeConfig, effective_cache_mode, run
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
        """The reference judge's cache scope without the metric: a real judge answers one request the same whichever
        metric sent it, so sibling metrics' identical requests share one cached answer, as in the run."""
        kind, _metric, digest = self.inner.scope(cell).split("|", 2)
        return f"{kind}|estimate|{digest}"

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


_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


def _spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (stripped of surrounding spaces; empty ones dropped).

    >>> _spans("Bake at 350 F. Cool it!  ")
    [(0, 14), (15, 23)]
    """
    out = []
    for m in _SENTENCE.finditer(text or ""):
        a, b = m.start(), m.end()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a and re.search(r"\w", text[a:b]):
            out.append((a, b))
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w+", text) if len(w) > 2}


def stand_in(case):
    """The case with stand-in labels for the estimate (an annotated case is returned as it is): each answer
    sentence a claim, supported by the passage sentence sharing most words with it, else not found.

    >>> from harness.core.records import Case, Context
    >>> c = stand_in(Case("x", "q?", (Context("1", "Heat to 350 F. Bake 8 minutes."),), "Bake for 8 minutes.", None))
    >>> [(cl.text, cl.label, cl.evidence[0].start) for cl in c.annotation.claims]
    [('Bake for 8 minutes.', 'supported', 15)]
    """
    if case.annotation is not None:
        return case
    passages = [(ctx, a, b, _words(ctx.text[a:b])) for ctx in case.contexts for a, b in _spans(ctx.text)]
    claims = []
    for a, b in _spans(case.answer):
        words = _words(case.answer[a:b])
        best = max(passages, key=lambda p: len(words & p[3]), default=None)
        if best is not None and words & best[3]:
            claims.append(Claim(case.answer[a:b], (a, b), "supported", (Evidence(best[0].id, best[1], best[2]),)))
        else:
            claims.append(Claim(case.answer[a:b], (a, b), "not_found"))
    return replace(case, annotation=Annotation(tuple(claims), answerable=True, abstention=False))


def estimate(opts, sample: int = 30) -> Estimate:
    """The estimate for a run of ``opts`` (a :class:`harness.run.runner.RunOptions`), sending nothing to
    its judge: the metrics run on ``sample`` cases in a temporary directory against the reference judge."""
    cases = list(opts.cases)
    proxy = bool(unannotated(cases)) if cases else True
    basis = [stand_in(c) for c in cases] if cases else list(load_cases(packaged_cases()))
    chosen = sample_of(basis, sample)
    shared = effective_cache_mode(opts) != "live"   # the run will share identical requests through its cache
    with tempfile.TemporaryDirectory(prefix="harness-estimate-") as tmp:
        sub = replace(opts, cases=CaseSet("(estimate sample)", tuple(chosen), "estimate"),
                      judge=JudgeConfig(), cache_mode="record" if shared else "live",
                      cache_path=os.path.join(tmp, "cache.sqlite") if shared else None, out_dir=tmp,
                      run_id="estimate", progress=False, upstream_wrapper=Recount, workers=1, ray=None, repeats=1,
                      reuse_cells=False)
        out = run(sub)
        store = RunStore.open(out.store_path)
        try:
            calls = store.calls()
        finally:
            store.close()
    n = len(chosen)
    per = []
    for m in opts.metrics:   # per answer of the sample: a metric that does not apply to an answer costs nothing there
        d = calls[(calls["metric"] == m) & (calls["cached"] == 0)]
        per.append(MetricEstimate(m, len(d) / n, float(d["prompt_tokens"].sum()) / n,
                                  float(d["completion_tokens"].sum()) / n))
    return Estimate(len(cases), n, proxy, 1.0, tuple(per), getattr(opts, "repeats", 1))


def lines(est: Estimate, shorts: dict[str, str], price=None, concurrency: int = 8,
          latency_s: float = 1.0) -> list[str]:
    """The estimate as the terminal prints it."""
    n = est.cases * est.repeats
    w = max([len(s) for s in shorts.values()] + [6])
    out = [f"estimate: {est.cases} case(s) x {est.repeats} repeat(s); prompts rendered for {est.sample} case(s) "
           "against the offline reference judge, nothing sent to the judge; tokens counted as words and "
           f"punctuation + {PER_MESSAGE} per message"]
    if est.proxy:
        out.append("  the cases carry no annotation: for the estimate only, each answer sentence stands in as a claim "
                   "supported by the passage sentence closest to it (the prompts are rendered on your own text)")
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
