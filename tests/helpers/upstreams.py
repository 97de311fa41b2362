"""Upstream wrappers for tests that run cells in worker processes: module-level and picklable (a
worker gets the run's ``upstream_wrapper`` pickled), unlike a lambda or a class inside a test."""
import json
import os
import sys

from harness.judge.upstream import UpstreamError


class FailFor:
    """``upstream_wrapper``: every call of the given cases fails (not retryable)."""

    def __init__(self, case_ids):
        self.case_ids = set(case_ids)

    def __call__(self, inner):
        return _Failing(inner, self.case_ids)


class _Failing:
    def __init__(self, inner, case_ids):
        self.inner, self.case_ids = inner, case_ids
        self.kind, self.model = inner.kind, inner.model

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        if cell.case in self.case_ids:
            raise UpstreamError("injected outage", status=400, retryable=False)
        return await self.inner.complete(cell, body)

    async def aclose(self):
        await self.inner.aclose()


class Probe:
    """``upstream_wrapper``: on each vendor judge call, write what the process looks like
    (pid, the forced vendor switches, the order modules were imported in) to ``<dir>/<pid>.json``; with
    ``die_on`` a call of that case kills the process (a worker that dies mid-run)."""

    def __init__(self, out_dir, die_on=None):
        self.out_dir, self.die_on = str(out_dir), die_on

    def __call__(self, inner):
        return _Probing(inner, self.out_dir, self.die_on)


class _Probing(_Failing):
    def __init__(self, inner, out_dir, die_on):
        super().__init__(inner, set())
        self.out_dir, self.die_on = out_dir, die_on

    async def complete(self, cell, body):
        if cell.case == self.die_on:
            os._exit(9)
        if cell.metric.split(".")[0] in ("ragas", "deepeval", "trulens"):   # each vendor call: the latest view
            from harness.metric.vendor_env import forced

            with open(os.path.join(self.out_dir, f"{os.getpid()}.json"), "w") as fh:
                json.dump({"pid": os.getpid(), "env": {k: os.environ.get(k) for k in forced()},
                           "modules": list(sys.modules)}, fh)
        return await self.inner.complete(cell, body)
