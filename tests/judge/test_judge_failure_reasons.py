"""A judge failure's reason says what happened, and a worker without the judge's key refuses to start
(issue 25, probes 3 and 9)."""
import dataclasses

from harness.cases.load import CaseSet
from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest


def _reasons(out) -> list[str]:
    s = RunStore.open(out.store_path)
    try:
        return [r[0] for r in s.rows("SELECT reason FROM cells WHERE status = 'error'")]
    finally:
        s.close()


def test_a_judge_error_with_no_reply_does_not_blame_the_usage(tmp_path, canonical):
    """Probe 9: every judge-error reason ended with "...carried no readable usage...", even for HTTP
    errors and timeouts, where no reply came at all."""
    cases = CaseSet(canonical.path, canonical.cases[:2], canonical.sha256)
    out = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="e", progress=False,
                         workers=1, retry_attempts=1, upstream_wrapper=FaultInjector(FaultSpec.parse("500=1"))))
    reasons = _reasons(out)
    assert len(reasons) == 2 and all("injected fault: judge HTTP 500" in r for r in reasons)
    assert not [r for r in reasons if "usage" in r]


def test_a_worker_whose_environment_lacks_the_key_refuses_to_start(monkeypatch):
    """Probe 3: a Ray actor reads the key from its own node's environment; where the variable was
    missing every request went out without Authorization while the header said "key from $VAR"."""
    from harness.run.cellwork import WorkerFailed, WorkerSpec, make_gateway

    monkeypatch.delenv("HARNESS_TEST_ABSENT_KEY", raising=False)
    judge = JudgeConfig(url="http://127.0.0.1:9/v1", model="m", key_env="HARNESS_TEST_ABSENT_KEY")
    spec = WorkerSpec(run_id="r", judge=judge, mode="live", cache_path=None, retry_attempts=1,
                      retry_base_delay_s=0.1, call_timeout_s=1, cell_timeout_s=5, client_timeout_s=5, concurrency=1)
    with pytest.raises(WorkerFailed, match=r"HARNESS_TEST_ABSENT_KEY is not set in this worker's environment"):
        make_gateway(spec, {}, None)
    monkeypatch.setenv("HARNESS_TEST_ABSENT_KEY", "sk-present-1234")
    assert make_gateway(spec, {}, None) is not None
    replay = dataclasses.replace(spec, mode="replay")          # replay sends nothing: no key needed
    monkeypatch.delenv("HARNESS_TEST_ABSENT_KEY")
    assert make_gateway(replay, {}, object()) is not None
