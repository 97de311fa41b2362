"""``harness compare`` names every difference of the runs' specs (issue 25, probe 4): it said
"nothing in the specs ... the runs should agree" when the similarity threshold differed, when one run
had --faults, and when no case was shared."""
from harness.cases.load import CaseSet
from harness.run.runner import RunOptions, run

import pytest

AGREE = "nothing in the specs or the case digests: the runs should agree"


def _run(tmp_path, cases, run_id, metrics=("inhouse.span",), **kw):
    return run(RunOptions(cases=cases, metrics=list(metrics), out_dir=str(tmp_path), run_id=run_id,
                          progress=False, workers=1, **kw))


def _differences(tmp_path, a, b):
    from harness.reports.analysis.compare import compare
    from harness.reports.analysis.data import load_run

    return compare(load_run(a, str(tmp_path)), load_run(b, str(tmp_path))).differences


@pytest.fixture
def one(canonical):
    return CaseSet(canonical.path, canonical.cases[:1], canonical.sha256)


def test_the_same_spec_agrees(tmp_path, one):
    _run(tmp_path, one, "a")
    _run(tmp_path, one, "b")
    assert _differences(tmp_path, "a", "b") == [AGREE]


def test_another_similarity_threshold_is_named(tmp_path, one):
    m = ("baseline.similarity",)
    _run(tmp_path, one, "a", m, metric_args={"baseline.similarity": {"threshold": 0.8}})
    _run(tmp_path, one, "b", m, metric_args={"baseline.similarity": {"threshold": 0.9}})
    diffs = _differences(tmp_path, "a", "b")
    assert diffs == ["metric option: baseline.similarity threshold 0.8 -> 0.9"]


def test_fault_injection_in_one_run_is_named(tmp_path, one):
    from harness.judge.faults import FaultInjector, FaultSpec

    _run(tmp_path, one, "a")
    _run(tmp_path, one, "b", upstream_wrapper=FaultInjector(FaultSpec.parse("500=0.1"), 3))
    assert _differences(tmp_path, "a", "b") == ["faults: none -> 500=0.1 (seed 3)"]


def test_no_shared_case_is_named(tmp_path, canonical, one):
    other = CaseSet(canonical.path, canonical.cases[1:2], canonical.sha256)
    _run(tmp_path, one, "a")
    _run(tmp_path, other, "b")
    diffs = _differences(tmp_path, "a", "b")
    assert diffs == ["cases: no case in common (A has 1, B has 1): the scores cannot be paired"]
