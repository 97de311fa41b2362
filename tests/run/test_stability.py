"""Judge stability across repeats: ``--repeats K`` judges every cell K times (the repeat in the judge-cache
key and in the store's key), and the report gives per metric the score spread, the decisions that flip,
the failures per repeat and the agreement between repeats; the realistic judge's seeded sampling mode
makes them move, and the reference judge is called trivially stable rather than shown as zeros."""
from __future__ import annotations

from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.helpers.judges.realistic import MODEL, serve
from tests.helpers.judges.sampling import Sampling

METRICS = ["inhouse.span", "ragas.faithfulness", "deepeval.faithfulness", "trulens.groundedness"]


def _few(canonical, n=10):
    """The first ``n`` canonical cases (enough answers to see judge noise, few enough to run quickly)."""
    return canonical.__class__(canonical.path, canonical.cases[:n], canonical.sha256)


def _run(canonical, out, sampling, repeats=3, cache="live", run_id="st"):
    with serve(sampling=sampling) as judge:
        outcome = run(RunOptions(cases=_few(canonical), metrics=METRICS, out_dir=out, run_id=run_id, progress=False,
                                 judge=JudgeConfig(url=judge.url, model=MODEL), cache_mode=cache, repeats=repeats))
        return outcome, judge.stats()


@pytest.fixture(scope="module")
def sampled(canonical, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("sampled"))
    outcome, served = _run(canonical, out, Sampling(rate=0.3, seed=7))
    from harness.reports.build import build

    return outcome, served, build(outcome.run_dir)


def test_every_repeat_is_kept_and_the_run_table_is_repeat_0(sampled, canonical):
    outcome, served, _ = sampled
    store = RunStore.open(outcome.store_path)
    try:
        assert store.rows("SELECT COUNT(*) FROM cells")[0][0] == len(METRICS) * 10
        reps = store.rows("SELECT repeat, COUNT(*) FROM repeat_cells GROUP BY repeat ORDER BY repeat")
        calls = sum(store.rows(f"SELECT SUM(calls) FROM {t}")[0][0] for t in ("cells", "repeat_cells"))
    finally:
        store.close()
    assert reps == [(1, len(METRICS) * 10), (2, len(METRICS) * 10)]
    # every request a vendor sent is a call of its cell, the Responses API probes this chat-only judge
    # refuses (TruLens, once a cell) included; the judge counts the two apart
    assert served["refused"] > 0 and calls == served["calls"] + served["refused"]


def test_sampling_judge_moves_scores_and_the_report_measures_it(sampled):
    _, _, built = sampled
    st = built.report.stability
    assert st.repeats == 3 and not st.trivial
    by = {s.metric: s for s in st.metrics}
    assert set(by) == set(METRICS)
    assert any(s.flip_rate and s.flip_rate > 0 for s in by.values())
    assert all(s.sd_mean is not None and s.sd_max >= s.sd_mean >= 0 for s in by.values())
    assert any(s.sd_mean > 0 for s in by.values())
    for s in by.values():
        assert [r.repeat for r in s.rates] == [0, 1, 2] and all(r.cells == 10 for r in s.rates)
    md = open(built.md_path, encoding="utf-8").read()
    assert "## Judge stability across repeats" in md and "decision flips" in md
    # each metric's request temperature, as its vendor sent it, beside its flips
    assert all(s.sampling.startswith("temperature=") for s in by.values()), {m: s.sampling for m, s in by.items()}
    assert "request sampling" in md


def test_the_request_temperature_tells_the_judges_determinism_from_the_metrics(canonical, tmp_path):
    """Under a judge that is deterministic at temperature 0, a metric that sends temperature 0 shows no flip: the
    report names its settings and says that is no evidence about its stability."""
    outcome, _ = _run(canonical, str(tmp_path), None, repeats=2)
    from harness.reports.analysis.data import load_run
    from harness.reports.build import compute
    from harness.reports.model.stability_section import NO_EVIDENCE, row

    st = compute(load_run(outcome.run_dir)).stability
    by = {s.metric: s for s in st.metrics}
    assert by["inhouse.span"].sampling == "temperature=0" and by["inhouse.span"].deterministic
    assert NO_EVIDENCE in row(by["inhouse.span"], "inhouse.span")[1]
    for s in by.values():
        if not s.deterministic:
            assert NO_EVIDENCE not in row(s, s.metric)[1]


def test_without_sampling_the_realistic_judge_is_stable(canonical, tmp_path):
    outcome, _ = _run(canonical, str(tmp_path), None, repeats=2)
    from harness.reports.analysis.data import load_run
    from harness.reports.build import compute

    st = compute(load_run(outcome.run_dir)).stability
    assert all(s.flip_rate == 0 and s.sd_max == 0 for s in st.metrics if s.answers)


def test_the_repeat_is_in_the_judge_cache_key(canonical, tmp_path):
    """Record mode: repeat 1 never replays repeat 0's answers (a temperature-0 call included), and a
    rerun replays each repeat from its own entries."""
    cases = _few(canonical, 3)
    with serve(sampling=Sampling(rate=0.5, seed=1)) as judge:
        opts = RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="c1", progress=False,
                          judge=JudgeConfig(url=judge.url, model=MODEL), cache_mode="record", repeats=2)
        run(opts)
        first = judge.stats()["calls"]
        store = RunStore.open(f"{tmp_path}/c1/store.sqlite")
        try:
            assert store.rows("SELECT SUM(cache_hits) FROM repeat_cells")[0][0] == 0
            scores = store.rows("SELECT c.score, r.score FROM cells c JOIN repeat_cells r USING (case_id, metric) ORDER BY case_id")
        finally:
            store.close()
        from dataclasses import replace

        run(replace(opts, run_id="c2", reuse_cells=False))
        assert judge.stats()["calls"] == first   # every repeat answered from the cache
    store = RunStore.open(f"{tmp_path}/c2/store.sqlite")
    try:
        again = store.rows("SELECT c.score, r.score FROM cells c JOIN repeat_cells r USING (case_id, metric) ORDER BY case_id")
    finally:
        store.close()
    assert again == scores


def test_reference_judge_is_called_trivially_stable(canonical, tmp_path):
    from harness.reports.build import build

    cases = _few(canonical, 4)
    outcome = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="ref",
                             progress=False, repeats=2))
    built = build(outcome.run_dir)
    md = open(built.md_path, encoding="utf-8").read()
    assert built.report.stability.trivial and "stable by construction" in md and "decision flips" not in md


class FailRepeat1:
    """An upstream wrapper: the judge fails every call of repeat 1 (a 400, not retried)."""

    def __init__(self, upstream):
        self.inner = upstream
        self.kind, self.model = upstream.kind, upstream.model

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        from harness.judge.upstream import UpstreamError

        if cell.repeat == 1:
            raise UpstreamError("injected: repeat 1 fails", status=400, retryable=False)
        return await self.inner.complete(cell, body)

    async def aclose(self):
        await self.inner.aclose()


def test_an_error_in_a_later_repeat_is_unfinished_work(canonical, tmp_path, monkeypatch, capsys):
    """An error in repeat 1 counts as the run's own would: the outcome and the exit code say so, and a
    rerun with the run id resumes exactly those cells."""
    cases = _few(canonical, 3)
    outcome = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r1",
                             progress=False, repeats=2, upstream_wrapper=FailRepeat1))
    assert outcome.counts["inhouse.span"].get("error", 0) == 0 and outcome.repeat_errors == 3
    again = run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="r1",
                           progress=False, repeats=2))
    assert again.repeat_errors == 0 and again.computed == 3

    import dataclasses

    import harness.run.runner as runner  # the CLI imports the runner when it runs: patched there

    failing = runner.run
    monkeypatch.setattr(runner, "run", lambda opts: failing(dataclasses.replace(opts, upstream_wrapper=FailRepeat1)))
    from harness.console import main

    code = main(["run", "--cases", canonical.path, "--metrics", "inhouse.span", "--repeats", "2", "--out",
                 str(tmp_path), "--run-id", "r2", "--no-report", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1 and "cell(s) of repeats 1-1 errored" in out and "--run-id r2" in out
