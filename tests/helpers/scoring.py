"""Score one case with one metric through a real gateway and the reference judge (tests, notebooks)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from harness.core.records import Case, CellResult, Ledger
from harness.judge.gateway import CallRecord, Gateway
from harness.judge.upstream import ReferenceUpstream, RetryPolicy


@dataclass
class Scored:
    result: CellResult
    ledger: Ledger
    calls: list[CallRecord]


def score_cases(metric: str, cases: list[Case], *, run: str = "test", concurrency: int = 4,
                upstream=None, policy: RetryPolicy | None = None) -> dict[str, Scored]:
    """Score ``cases`` with ``metric`` (reference judge unless ``upstream`` is given)."""
    from harness.judge.transport import GatewayTransport
    from harness.metric import registry
    from harness.metric.http import Pools
    from harness.run.cellwork import run_cell

    cls = registry.get(metric)
    up = upstream or ReferenceUpstream({(run, c.id): c for c in cases})
    gw = Gateway(up, policy=policy or RetryPolicy(max_attempts=1))

    async def main():
        gw.attach()   # in-process, as in a run
        pools = Pools(transport=GatewayTransport(gw))
        sem = asyncio.Semaphore(concurrency)

        async def one(case):
            async with sem:
                res, ledger, calls = await run_cell(gw, cls, run, case, metric, "reference-judge", pools, 600, 600)
                return case.id, Scored(res, ledger, calls)

        try:
            return dict(await asyncio.gather(*(one(c) for c in cases)))
        finally:
            await pools.aclose()
            await gw.aclose()

    return asyncio.run(main())


def score_one(metric: str, case: Case, **kw) -> Scored:
    """Score a single case."""
    return score_cases(metric, [case], **kw)[case.id]
