"""Groundedness inside a team's own pytest suite: :func:`assert_grounded` and the ``groundedness`` fixture.

It scores cases through the same engine as ``harness run`` (same runner, gateway, judge cache and
cell cache, same run store), and fails a test with one line per failing case and metric::

    from harness.run.testing import assert_grounded

    def test_support_bot_answers_are_grounded():
        assert_grounded("tests/rag_cases.jsonl", {"inhouse.span": 0.8}, per_case=0.5)

One test item per case, as DeepEval users parametrize over goldens (:func:`case_params`)::

    from harness.run.testing import assert_grounded, case_params

    @pytest.mark.parametrize("case", case_params("tests/rag_cases.jsonl"))
    def test_each_answer_is_grounded(case):
        assert_grounded(case, {"inhouse.span": 0.8})

Cases are anything ``harness.evaluate`` takes: a case file, a list of dicts or a DataFrame (the harness's
field names, or Ragas' or DeepEval's). An errored cell always fails the test (a judge fault is never a pass).

The ``groundedness`` fixture (this module is a pytest plugin, registered under ``pytest11``; with plugin
autoload off, ``-p harness.run.testing``) hands out the same with the judge and cache taken from the
environment, so CI replays recorded judge answers with no key:

- ``HARNESS_JUDGE_URL``, ``HARNESS_JUDGE_MODEL``, ``HARNESS_JUDGE_KEY_ENV``: the judge (none set: the
  offline reference judge, which needs annotated cases);
- ``HARNESS_CACHE_PATH``, ``HARNESS_CACHE_MODE`` (``record``, ``replay``, ``live``; default as ``harness
  run``): the judge cache, e.g. a recorded cache committed to the repository and replayed in CI;
- ``HARNESS_OUT``: where the run stores go (default: a folder of pytest's temporary directory).
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass

from harness.cases.sets import case_set, one_case_sets
from harness.judge.reference import refuse_unannotated
from harness.metric import registry
from harness.metric.extras import select
from harness.metric.vendor_env import switches
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

try:   # the fixture, when pytest is there (a test run); the assert helper needs no pytest
    import pytest
except ImportError:  # pragma: no cover - pytest is not a dependency of the engine
    pytest = None

__all__ = ["Scores", "assert_grounded", "case_params", "groundedness", "score"]

OWN_SWITCHES = {"--cache record": "HARNESS_CACHE_MODE=record (or cache_mode='record')",
                "--cache replay": "HARNESS_CACHE_MODE=replay (or cache_mode='replay')",
                "--cache-path": "HARNESS_CACHE_PATH (or cache_path=)"}
"""A reason the engine words for the command line, said with this helper's own switches."""


def _own_words(reason: str | None) -> str | None:
    """A cell's reason, its command-line switches named as this helper's.

    >>> _own_words("not in the judge cache (request 1a2b, step 'x'); rerun with --cache record")
    "not in the judge cache (request 1a2b, step 'x'); rerun with HARNESS_CACHE_MODE=record (or cache_mode='record')"
    """
    for cli, here in OWN_SWITCHES.items():
        reason = reason.replace(cli, here) if reason else reason
    return reason


@dataclass(frozen=True)
class Scores:
    """What one scoring produced."""

    run_id: str
    """The run's id."""
    run_dir: str
    """Its directory (``store.sqlite``, ``spec.json``)."""
    cells: tuple
    """``(case_id, metric, status, score or None, reason)`` for every cell."""

    def score(self, case_id: str, metric: str) -> float | None:
        """The cell's score, None when it is not a score."""
        for c, m, status, value, _ in self.cells:
            if (c, m) == (case_id, metric):
                return value if status == "scored" else None
        raise KeyError(f"no cell for case {case_id!r} and metric {metric!r}")

    def mean(self, metric: str) -> float | None:
        """The metric's mean over its scored cells (None when none scored)."""
        xs = [v for _, m, status, v, _ in self.cells if m == metric and status == "scored"]
        return sum(xs) / len(xs) if xs else None

    def failures(self, minimums: dict[str, float], per_case=None) -> list[str]:
        """One line per failed criterion: a metric whose mean is worse than its threshold, a case worse
        than the per-case threshold (a number for every metric, or ``{metric: threshold}``), a cell that
        errored. A threshold is the worst acceptable score in the metric's own direction: a floor for a
        metric whose higher score is better, a ceiling for one whose lower score is better (Opik's
        hallucination score, 0 = faithful)."""
        out = []
        for metric, bound in minimums.items():
            mean = self.mean(metric)
            if mean is None or _worse(metric, mean, bound):
                out.append(f"{metric}: mean {'none scored' if mean is None else f'{mean:.3f}'} "
                           f"{_worse_sign(metric)} {bound:g}")
        floors = per_case if isinstance(per_case, dict) else {m: per_case for m in minimums} if per_case is not None \
            else {}
        for c, m, status, value, reason in self.cells:
            if status == "error":
                out.append(f"{c} / {m}: ERROR ({reason})")
            elif m in floors and status == "scored" and _worse(m, value, floors[m]):
                out.append(f"{c} / {m}: {value:.3f} {_worse_sign(m)} {floors[m]:g}" + (f" ({reason})" if reason else ""))
        return out


def _higher_is_better(metric: str) -> bool:
    return bool(getattr(registry.get(metric), "higher_is_better", True))


def _worse(metric: str, score: float, bound: float) -> bool:
    """``score`` is on the wrong side of ``bound`` for the metric's direction."""
    return score < bound if _higher_is_better(metric) else score > bound


def _worse_sign(metric: str) -> str:
    return "<" if _higher_is_better(metric) else "> (lower is better)"


def judge_from_env():
    """The judge the environment names (``HARNESS_JUDGE_*``), or None for the reference judge."""
    url, model = os.environ.get("HARNESS_JUDGE_URL"), os.environ.get("HARNESS_JUDGE_MODEL")
    if not url and not model:
        return None
    if not model:
        raise ValueError("HARNESS_JUDGE_URL is set but HARNESS_JUDGE_MODEL is not (the model id to send)")
    return JudgeConfig(url=url or "https://api.openai.com/v1", model=model,
                       key_env=os.environ.get("HARNESS_JUDGE_KEY_ENV") or None)


def score(cases, metrics, judge=None, *, out_dir: str | None = None, cache_path: str | None = None,
          cache_mode: str | None = None, run_id: str | None = None, workers: int = 1) -> Scores:
    """Score ``cases`` (a case file, a :class:`~harness.cases.load.CaseSet`, rows as ``harness.evaluate`` takes) with ``metrics`` (names or
    vendor prefixes) through the engine; ``judge`` a :class:`~harness.run.runner.JudgeConfig` (None: from
    the environment, else the reference judge)."""

    cases = case_set(cases)
    spec = ",".join(metrics) if not isinstance(metrics, str) else metrics
    names, _ = select(spec, registry.resolve(spec))
    judge = judge or judge_from_env() or JudgeConfig()
    if judge.is_reference:
        refuse_unannotated(cases)
    out_dir = out_dir or os.environ.get("HARNESS_OUT") or tempfile.mkdtemp(prefix="harness-test-")
    opts = RunOptions(cases=cases, metrics=names, judge=judge, out_dir=out_dir, run_id=run_id,
                      cache_mode=cache_mode or os.environ.get("HARNESS_CACHE_MODE") or "auto",
                      cache_path=cache_path or os.environ.get("HARNESS_CACHE_PATH") or None,
                      progress=False, workers=workers)
    with switches():   # the vendor switches for this call only: the test session's environment after
        outcome = run(opts)
    store = RunStore.open(outcome.store_path)
    try:
        rows = store.rows("SELECT case_id, metric, status, score, reason FROM cells ORDER BY metric, case_id")
    finally:
        store.close()
    cells = tuple((c, m, s, float(v) if s == "scored" and v is not None and not math.isnan(v) else None,
                   _own_words(r)) for c, m, s, v, r in rows)
    return Scores(outcome.run_id, outcome.run_dir, cells)


def assert_grounded(cases, minimums: dict[str, float], *, per_case=None, judge=None, **options) -> Scores:
    """Score ``cases`` with the metrics of ``minimums`` and raise AssertionError listing every metric
    whose mean is worse than its threshold, every case worse than ``per_case`` and every errored cell;
    return the :class:`Scores` when all hold. Thresholds are read in each metric's direction
    (:meth:`Scores.failures`): ``{"opik.hallucination": 0.2}`` asks for a mean of at most 0.2."""
    got = score(cases, list(minimums), judge, **options)
    failed = got.failures(minimums, per_case)
    if failed:
        raise AssertionError(f"groundedness below threshold in run {got.run_id} ({got.run_dir}):\n  "
                             + "\n  ".join(failed))
    return got


def case_params(cases) -> list:
    """One ``pytest.param`` per case (its id the test id), for ``@pytest.mark.parametrize``; each is a one-case set
    that :func:`assert_grounded` and :func:`score` take."""
    return [pytest.param(one, id=one.cases[0].id) for one in one_case_sets(cases)]


if pytest is not None:
    @pytest.fixture
    def groundedness(tmp_path_factory):
        """A scorer for a test: ``groundedness.score(...)`` / ``groundedness.check(...)`` with the judge and
        cache from the environment, run stores under pytest's temporary directory (or ``HARNESS_OUT``)."""
        out = os.environ.get("HARNESS_OUT") or str(tmp_path_factory.mktemp("harness-runs"))
        return _Scorer(out)


class _Scorer:
    """What the ``groundedness`` fixture hands a test."""

    def __init__(self, out_dir: str):
        self.out_dir = out_dir

    def score(self, cases, metrics, **options) -> Scores:
        return score(cases, metrics, out_dir=options.pop("out_dir", self.out_dir), **options)

    def check(self, cases, minimums: dict[str, float], **options) -> Scores:
        return assert_grounded(cases, minimums, out_dir=options.pop("out_dir", self.out_dir), **options)
