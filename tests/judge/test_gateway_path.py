"""One request path for every endpoint of the gateway (issue 31.3): chat completions, the Responses API and
embeddings are each one entry of the route table (:data:`harness.judge.gateway.ROUTES`) and all go through
:meth:`harness.judge.gateway.Gateway.handle`, so each meets the cell's time budget, fault injection, the
retries and the ledger the same way. In a run, an embedding call of a vendor (the similarity baseline) that
the judge never answers ends its cell as an error at the cell's budget, and an injected fault on it is an
error, never a score; either way a resume recomputes the cell."""
from __future__ import annotations

import asyncio

from harness.cases.load import CaseSet
from harness.judge import embeddings, loopback, transport
from harness.judge.faults import FaultInjector, FaultSpec
from harness.judge.gateway import ROUTES, Gateway
from harness.judge.responses_api import response_of
from harness.judge.upstream import Cell, RetryPolicy
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

BODIES = {
    "chat/completions": {"model": "m", "messages": [{"role": "user", "content": "Is the sky blue?"}]},
    "responses": {"model": "m", "input": "Is the sky blue?"},
    "embeddings": {"model": "any", "input": ["the sky", "is blue"]},
}
"""A request of each endpoint (a new entry of the route table needs one here: see the first test)."""


class Echo:
    """A judge and an embedding endpoint that answer at once."""

    kind, model = "test", "echo"

    def scope(self, *cell) -> str:
        return "echo"

    async def complete(self, cell, body):
        await asyncio.sleep(0)
        done = {"id": "chatcmpl-1", "model": self.model, "choices": [{"message": {"content": "yes"}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1}}
        return response_of(done) if "input" in body else done

    async def embed(self, cell, body):
        await asyncio.sleep(0)
        texts = embeddings.inputs_of(body)
        return embeddings.reply([[0.5, 0.5]] * len(texts), self.model, texts)

    async def aclose(self):
        return None


class Never(Echo):
    """A judge and an embedding endpoint that take every request and never answer; they count the requests
    that reached them and the ones the gateway gave up on."""

    def __init__(self):
        self.reached, self.given_up = 0, 0

    async def _hang(self):
        self.reached += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.given_up += 1
            raise

    async def complete(self, cell, body):
        await self._hang()

    async def embed(self, cell, body):
        await self._hang()


def _gateway(upstream, embedder, **kw) -> Gateway:
    return Gateway(upstream, embeddings=embedder, policy=RetryPolicy(max_attempts=2, base_delay_s=0.0), **kw).attach()


def test_every_endpoint_is_in_the_table_and_goes_through_the_one_path():
    """Each endpoint's call passes the fault injector (one attempt each) and leaves one ledger row with its
    time in the judge measured, as the one path records it."""
    assert set(BODIES) == set(ROUTES)

    async def go():
        inj = FaultInjector(FaultSpec.parse("500=0"))
        gw = _gateway(inj(Echo()), inj(Echo()))
        out = {}
        for route, body in BODIES.items():
            out[route] = await gw.handle(Cell("r", "c", route), body, route), gw.take("r", "c", route)
        await gw.aclose()
        return out, inj.counts()

    out, counts = asyncio.run(go())
    assert counts["attempts"] == len(ROUTES)
    assert loopback.ROUTES == transport.ROUTES   # the face forwards what the gateway serves, no more
    for route, ((status, reply), (ledger, calls)) in out.items():
        assert status == 200 and reply["model"] == "echo", (route, reply)
        assert ledger.calls == 1 and ledger.errors == 0 and len(calls) == 1, route
        call = calls[0]
        assert call.ok and call.attempts == 1 and call.judge_ms > 0 and len(call.key) == 64, (route, call)
    assert out["embeddings"][1][1][0].step == "embeddings" and out["embeddings"][1][1][0].prompt_tokens > 0


@pytest.mark.parametrize("route", sorted(BODIES))
def test_every_endpoint_ends_at_the_cells_budget_when_the_judge_never_answers(route):
    async def go():
        never = Never()
        gw = _gateway(never, never)
        cell = Cell("r", "c", "m")
        gw.budgets.open(cell, 0.05)
        status, reply = await asyncio.wait_for(gw.handle(cell, BODIES[route], route), 60)   # liveness bound only
        left = gw.inflight("r", "c", "m")
        ledger, calls = gw.take("r", "c", "m")
        await gw.aclose()
        return status, reply, left, ledger, calls, never

    status, reply, left, ledger, calls, never = asyncio.run(go())
    assert status == 504 and "time budget" in reply["error"]["message"], reply
    assert never.reached == 1 and never.given_up == 1 and left == 0   # the call was cut, not left hanging
    assert ledger.errors == 1 and "time budget" in calls[0].error and not calls[0].ok


@pytest.mark.parametrize("route", sorted(BODIES))
def test_an_injected_fault_reaches_every_endpoint_and_is_retried_the_same_way(route):
    async def go():
        inj = FaultInjector(FaultSpec.parse("500=1"))
        gw = _gateway(inj(Echo()), inj(Echo()))
        status, reply = await gw.handle(Cell("r", "c", "m"), BODIES[route], route)
        ledger, calls = gw.take("r", "c", "m")
        await gw.aclose()
        return status, reply, ledger, calls, inj.counts()

    status, reply, ledger, calls, counts = asyncio.run(go())
    assert status == 500 and "injected fault: judge HTTP 500" in reply["error"]["message"]
    assert calls[0].attempts == 2 and ledger.retries == 1 and ledger.errors == 1
    assert counts["500"] == counts["attempts"] == 2


class HungEmbeddings:
    """``RunOptions.upstream_wrapper``: the run's embedding endpoint takes every request and never answers;
    the judge passes through. Counts the embedding requests the gateway gave up on."""

    given_up = 0

    def __init__(self, inner):
        self.inner, self.kind, self.model = inner, inner.kind, inner.model

    def scope(self, *cell):
        return self.inner.scope(*cell)

    async def complete(self, cell, body):
        return await self.inner.complete(cell, body)

    async def embed(self, cell, body):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            type(self).given_up += 1
            raise

    async def aclose(self):
        await self.inner.aclose()


def _similarity_cells(outcome):
    store = RunStore.open(outcome.store_path)
    try:
        cells = store.rows("SELECT case_id, status, score, reason FROM cells WHERE metric = 'baseline.similarity'")
        calls = store.rows("SELECT ok, error FROM calls WHERE metric = 'baseline.similarity' AND step = 'embeddings'")
    finally:
        store.close()
    return cells, calls


def _two_cases(canonical):
    return CaseSet(canonical.path, (canonical.by_id("cookie-yield"), canonical.by_id("leave-grounded")),
                   canonical.sha256)


def test_a_vendors_embedding_call_the_judge_never_answers_ends_its_cell_at_the_budget_and_resumes(canonical, tmp_path):
    cases = _two_cases(canonical)
    HungEmbeddings.given_up = 0
    hung = run(RunOptions(cases=cases, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="h",
                          progress=False, upstream_wrapper=HungEmbeddings, cell_timeout_s=1.0))
    cells, calls = _similarity_cells(hung)
    assert len(cells) == 2 and all(status == "error" and score is None for _, status, score, _ in cells), cells
    assert calls and all(not ok and "time budget" in error for ok, error in calls), calls
    assert HungEmbeddings.given_up == len(calls)   # every hung call was cut at the budget, none left running
    again = run(RunOptions(cases=cases, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="h",
                           progress=False))
    cells, _ = _similarity_cells(again)
    assert again.computed == 2 and again.reused == 0
    assert [status for _, status, _, _ in cells] == ["scored", "scored"], cells


def test_an_injected_fault_on_a_vendors_embedding_call_is_an_error_never_a_score_and_resumes(canonical, tmp_path):
    cases = _two_cases(canonical)
    inj = FaultInjector(FaultSpec.parse("429=1,retry_after=0"))
    faulted = run(RunOptions(cases=cases, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="f",
                             progress=False, upstream_wrapper=inj, retry_attempts=2, retry_base_delay_s=0.0))
    cells, calls = _similarity_cells(faulted)
    assert [status for _, status, _, _ in cells] == ["error", "error"] and all(s is None for _, _, s, _ in cells)
    assert all("injected fault: judge HTTP 429" in reason for *_, reason in cells), cells
    assert calls and all(not ok and "HTTP 429" in error for ok, error in calls)
    assert inj.counts()["429"] == 2 * len(calls)
    again = run(RunOptions(cases=cases, metrics=["baseline.similarity"], out_dir=str(tmp_path), run_id="f",
                           progress=False))
    cells, _ = _similarity_cells(again)
    assert again.computed == 2 and [status for _, status, _, _ in cells] == ["scored", "scored"], cells
