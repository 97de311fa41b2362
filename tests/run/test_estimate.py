"""``harness run --estimate``: calls, tokens and money per metric before any judge call, within 15% of
what the realistic test judge bills on the canonical set."""
from __future__ import annotations

import os
import subprocess
import sys

from harness.run.runner import JudgeConfig, RunOptions, run

import pytest

from tests.conftest import ROOT
from tests.helpers.judges.fixtures import realistic_judge  # noqa: F401 - fixture
from tests.helpers.judges.realistic import MODEL

METRICS = ["ragas.faithfulness", "ragas.response_groundedness", "deepeval.faithfulness",
           "deepeval.faithfulness_penalized", "trulens.groundedness", "trulens.groundedness_answerability",
           "trulens.citation", "inhouse.span"]


@pytest.fixture(scope="module")
def measured(realistic_judge, canonical, tmp_path_factory):  # noqa: F811 - fixture
    from harness.run.estimate import estimate

    opts = RunOptions(cases=canonical, metrics=METRICS, out_dir=str(tmp_path_factory.mktemp("est")),
                      run_id="billed", progress=False, judge=JudgeConfig(url=realistic_judge.url, model=MODEL),
                      cache_mode="live")
    realistic_judge.reset()
    est = estimate(opts)
    assert realistic_judge.stats()["calls"] == 0, "the estimate sent a request to the judge"
    run(opts)
    return est, realistic_judge.stats()


def test_the_estimate_is_within_15_percent_of_the_billed_tokens(measured, canonical):
    est, served = measured
    billed = served["prompt_tokens"] + served["completion_tokens"]
    guessed = sum(e.tokens for e in est.metrics) * len(canonical)
    print(f"\nestimate {guessed:,.0f} tokens, billed {billed:,} ({(guessed - billed) / billed:+.1%}); "
          f"calls estimate {sum(e.calls for e in est.metrics) * len(canonical):,.0f}, served {served['calls']:,}")
    assert not est.proxy and est.sample == len(canonical)
    assert abs(guessed - billed) <= 0.15 * billed


def test_the_estimate_calls_are_close_to_the_calls_served(measured, canonical):
    est, served = measured
    guessed = sum(e.calls for e in est.metrics) * len(canonical)
    assert abs(guessed - served["calls"]) <= 0.15 * served["calls"]


@pytest.fixture(scope="module")
def team_data(realistic_judge, tmp_path_factory):  # noqa: F811 - fixture
    """A team's own unannotated answers (the RAGTruth and FaithBench samples with their labels removed), estimated
    and then run under the realistic judge with the judge cache a real judge gets by default (record: sibling
    metrics' identical requests are sent once)."""
    import json

    from harness.cases.importers import faithbench, ragtruth
    from harness.cases.load import load_cases
    from harness.run.estimate import estimate

    data = os.path.join(ROOT, "tests", "data")
    rows = ragtruth.import_files([os.path.join(data, "ragtruth_response.jsonl"),
                                  os.path.join(data, "ragtruth_source_info.jsonl")]).cases
    rows += faithbench.import_files([os.path.join(data, "faithbench_batch_1.json")]).cases
    d = tmp_path_factory.mktemp("team")
    path = d / "team.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "annotation"}) + "\n" for r in rows))
    cases = load_cases(str(path))
    opts = RunOptions(cases=cases, metrics=METRICS, out_dir=str(d), run_id="team", progress=False,
                      judge=JudgeConfig(url=realistic_judge.url, model=MODEL), cache_mode="record",
                      cache_path=str(d / "cache.sqlite"))
    realistic_judge.reset()
    est = estimate(opts)
    assert realistic_judge.stats()["calls"] == 0, "the estimate sent a request to the judge"
    out = run(opts)
    from harness.store.runstore import RunStore
    store = RunStore.open(out.store_path)
    calls = store.calls()
    store.close()
    for e in est.metrics:
        d = calls[(calls["metric"] == e.metric) & (calls["cached"] == 0)]
        print(f"\n{e.metric}: est calls {e.calls * len(cases):.0f} tok {e.tokens * len(cases):,.0f}; real calls {len(d)} "
              f"tok {int(d['prompt_tokens'].sum() + d['completion_tokens'].sum()):,}")
    return est, realistic_judge.stats(), len(cases)


def test_on_a_teams_unannotated_data_the_estimate_is_within_15_percent(team_data):
    """Tokens billed and calls made, not applicable metrics at zero and shared cached calls once."""
    est, served, n = team_data
    billed = served["prompt_tokens"] + served["completion_tokens"]
    guessed = sum(e.tokens for e in est.metrics) * n
    calls = sum(e.calls for e in est.metrics) * n
    print(f"\nteam data ({n} answers): estimate {guessed:,.0f} tokens, billed {billed:,} "
          f"({(guessed - billed) / billed:+.1%}); calls estimate {calls:,.0f}, served {served['calls']:,} "
          f"({(calls - served['calls']) / served['calls']:+.1%})")
    assert est.proxy and est.sample == n
    assert abs(guessed - billed) <= 0.15 * billed
    assert abs(calls - served["calls"]) <= 0.15 * served["calls"]
    citation = next(e for e in est.metrics if e.metric == "trulens.citation")
    assert citation.calls == 0 and citation.tokens == 0   # no [N] markers in these answers: it never runs


def test_estimate_cli_prints_per_metric_and_sends_nothing(tmp_path):
    out = subprocess.run([sys.executable, "-m", "harness", "run", "--estimate", "--metrics", "inhouse.span",
                          "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m", "--out", str(tmp_path),
                          "--price-in", "1", "--price-out", "2", "--estimate-cases", "10000",
                          "--estimate-latency", "2", "--concurrency", "4"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "estimate: 10000 case(s)" in out.stdout and "inhouse.span" in out.stdout
    assert "at 2 s per judge call and 4 cell(s) in flight" in out.stdout
    total = next(ln for ln in out.stdout.splitlines() if ln.strip().startswith("total"))
    assert "n/a" not in total   # money at the given price
    assert not list(tmp_path.iterdir()), "the estimate wrote a run"
