"""Cost as billed: the ledger keeps tokens billed upstream, tokens served from the cache and retried
attempts apart; money comes only from a price table the user supplies (no built-in prices)."""
import json
import os
import subprocess
import sys

from harness.judge.accounting import Price, PriceError, parse_prices, prices_from_args, usage_of
from harness.judge.cache import JudgeCache
from harness.judge.gateway import Gateway
from harness.judge.upstream import RetryPolicy, UpstreamError

import httpx
import pytest

from tests.conftest import ROOT
from tests.helpers.judges.fixtures import realistic_judge  # noqa: F401 - fixture

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}], "temperature": 0}


class Scripted:
    kind, model = "scripted", "m"

    def __init__(self, *items):
        self.items, self.seen = list(items), 0

    def scope(self, cell):
        return ""

    async def complete(self, cell, body):
        self.seen += 1
        item = self.items.pop(0) if len(self.items) > 1 else self.items[0]
        if isinstance(item, Exception):
            raise item
        return item

    async def aclose(self):
        return None


def reply(usage=True):
    r = {"id": "x", "object": "chat.completion", "model": "m",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}]}
    if usage:
        r["usage"] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    return r


def test_billed_cached_and_retried_are_kept_apart(tmp_path):
    cache = JudgeCache(str(tmp_path / "c.sqlite"))
    up = Scripted(UpstreamError("judge HTTP 503", status=503), reply(), reply())
    with Gateway(up, cache=cache, mode="record", policy=RetryPolicy(max_attempts=3, base_delay_s=0.001)) as gw:
        url = gw.cell_url("r", "c", "m")
        for _ in range(2):   # the second is a cache hit
            assert httpx.post(f"{url}/chat/completions", json=BODY, timeout=30).status_code == 200
        ledger, calls = gw.take("r", "c", "m")
    assert up.seen == 2 and [c.cached for c in calls] == [False, True]
    assert (ledger.billed_prompt_tokens, ledger.billed_completion_tokens) == (100, 10)
    assert (ledger.cached_prompt_tokens, ledger.cached_completion_tokens) == (100, 10)
    assert (ledger.prompt_tokens, ledger.retries, ledger.cache_hits) == (200, 1, 1)


def test_a_reply_without_usage_is_counted_not_guessed():
    with Gateway(Scripted(reply(usage=False))) as gw:
        httpx.post(f"{gw.cell_url('r', 'c', 'm')}/chat/completions", json=BODY, timeout=30)
        ledger, calls = gw.take("r", "c", "m")
    assert ledger.usage_missing == 1 and ledger.billed_prompt_tokens == 0 and calls[0].usage is False


@pytest.mark.parametrize("usage", [None, "x", {"prompt_tokens": -3}, {"prompt_tokens": True}, {"prompt_tokens": "7"}])
def test_garbled_usage_never_crashes(usage):
    assert usage_of({"usage": usage}) == (0, 0, False)


def test_price_tables_come_from_the_user(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.6}}))

    class A:
        prices, price_in, price_out = str(path), None, None

    got = prices_from_args(A, "gpt-4o-mini-2024-07-18")
    assert got == {"source": str(path), "models": {"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.6}}}
    A.prices, A.price_in, A.price_out = None, 1.0, 2.0
    assert prices_from_args(A, "m")["models"] == {"m": {"input": 1.0, "output": 2.0}}
    A.price_out = None
    with pytest.raises(PriceError, match="go together"):
        prices_from_args(A, "m")
    assert parse_prices({"m": {"input": 3, "output": 4}})["m"].cost(1_000_000, 1_000_000) == Price(3, 4).cost(
        1_000_000, 1_000_000) == 7.0


def _harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ})


def test_run_and_report_show_billed_tokens_and_money(realistic_judge, tmp_path):  # noqa: F811 - fixture
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"realistic-judge": {"input": 2.0, "output": 8.0}}))
    realistic_judge.reset()
    out = _harness("run", "--metrics", "inhouse.span", "--judge-url", realistic_judge.url, "--judge-model",
                   "realistic-judge", "--cache", "live", "--out", str(tmp_path), "--run-id", "priced",
                   "--no-progress", "--prices", str(prices))
    assert out.returncode == 0, out.stderr
    served = realistic_judge.stats()
    billed = served["reported_prompt_tokens"] + served["reported_completion_tokens"]
    money = (served["reported_prompt_tokens"] * 2.0 + served["reported_completion_tokens"] * 8.0) / 1e6
    assert f"tokens billed: {billed:,}" in out.stdout and f"money: {money:.4g}" in out.stdout
    md = (tmp_path / "priced" / "report.md").read_text()
    assert f"tokens billed: {billed:,}" in md and "money / answer" in md and "realistic-judge: 2 in / 8 out" in md
    again = _harness("report", "priced", "--out", str(tmp_path), "--price-in", "1", "--price-out", "1")
    assert again.returncode == 0, again.stderr
    assert "realistic-judge: 1 in / 1 out" in (tmp_path / "priced" / "report.md").read_text()
    bad = _harness("report", "priced", "--out", str(tmp_path), "--prices", str(tmp_path / "nope.json"))
    assert bad.returncode == 2 and "cannot read the price table" in bad.stderr and "Traceback" not in bad.stderr


def test_without_prices_the_report_says_how_to_give_them(tmp_path):
    out = _harness("run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "free", "--no-progress")
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "free" / "report.md").read_text()
    assert "money: n/a (no price table given (pass --prices FILE" in md
    with open(os.path.join(ROOT, "reports", "cards", "inhouse.span.md"), encoding="utf-8") as fh:
        assert "the harness ships no prices" in fh.read()


def test_embedding_calls_are_not_the_judges_billed_tokens():
    """The similarity metrics' /v1/embeddings calls (served by the embedded model unless --embed-url)
    count in the cell's totals, not in the judge's billed tokens."""
    from harness.core.records import Ledger
    from harness.judge.accounting import add_call
    from harness.judge.gateway import CallRecord
    from harness.judge.upstream import Cell

    def rec(step):
        return CallRecord(cell=Cell("r", "c", "m"), seq=0, started=0.0, latency_ms=1.0, ok=True, cached=False,
                          attempts=1, prompt_tokens=40, completion_tokens=0, key="k", step=step)

    led = add_call(add_call(Ledger(), rec("embeddings")), rec("InhouseClaims"))
    assert (led.prompt_tokens, led.billed_prompt_tokens, led.calls) == (80, 40, 2)
