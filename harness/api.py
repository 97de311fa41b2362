"""The Python API: :func:`evaluate` runs cases x metrics and returns the run's tables as DataFrames.

It works from a script and inside a running event loop (a Jupyter notebook): there the run goes to a
private thread with its own loop, because ``asyncio.run`` cannot nest. It is the same run as
``harness run``: same store, same report, resumable by ``run_id``.
"""
from __future__ import annotations

import asyncio
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from harness.cases.sets import case_set  # noqa: F401 - re-exported: harness.api.case_set

RUN_OPTIONS = ("cache_mode", "cache_path", "concurrency", "out_dir", "run_id", "progress", "cell_timeout_s",
               "retry_attempts", "call_timeout_s", "judge_rpm", "judge_tpm",
               "judge_window_s", "judge_batch")
"""Keyword options passed on to :class:`harness.run.runner.RunOptions`."""


@dataclass
class EvalResult:
    """Where a run went, and its store's tables as pandas DataFrames (read on first use)."""

    run_id: str
    """The run's id (pass it back as ``run_id=`` to resume)."""
    run_dir: str
    """The run directory (store, spec, report)."""
    store_path: str
    """The run store (``store.sqlite``)."""
    report_path: str | None
    """The HTML report, or None when it was not built (``report=False``, or building failed)."""
    counts: dict
    """metric -> {status: number of cells}."""
    case_ids: list = field(default_factory=list)
    """The cases, in their order."""
    metrics: list = field(default_factory=list)
    """The metrics, in their order."""
    _tables: dict = field(default_factory=dict, repr=False)

    def _table(self, name: str):
        if name not in self._tables:
            from harness.store.frames import parsed  # noqa: PLC0415 - lazy: imported on first use, not when this module loads
            from harness.store.runstore import RunStore  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

            store = RunStore.open(self.store_path)
            try:
                self._tables[name] = parsed(name, getattr(store, name)())
            finally:
                store.close()
        return self._tables[name]

    @property
    def scores(self):
        """Cases (rows) by metrics (columns): each scored cell's score, NaN where a cell is not a score
        (``cells`` has its status and reason). Rows in case order, columns in metric order."""
        if "scores" not in self._tables:
            from harness.store.frames import score_table  # noqa: PLC0415 - lazy: pandas on first use

            cells = self.cells
            self._tables["scores"] = score_table(cells, self.case_ids or None, self.metrics or None)
        return self._tables["scores"]

    @property
    def cells(self):
        """One row per case and metric: ``case_id``, ``metric``, ``status``, ``score``, ``reason``, ledger;
        ``flags`` and ``detail`` as Python values."""
        return self._table("cells")

    @property
    def units(self):
        """Per-unit (claim, statement, sentence) verdicts of every cell (``quotes`` and ``detail`` parsed)."""
        return self._table("units")

    @property
    def calls(self):
        """One row per judge request (no prompt text, no headers, no key)."""
        return self._table("calls")

    @property
    def md_report_path(self) -> str | None:
        """The Markdown report beside the HTML one."""
        return os.path.join(self.run_dir, "report.md") if self.report_path else None


def evaluate(cases, metrics=None, judge=None, *, report=True, divergence_threshold: float | None = None,
             **options) -> EvalResult:
    """Score ``cases`` with ``metrics`` through one judge, like ``harness run``.

    Args:
        cases: a case file path (JSONL), a :class:`harness.cases.load.CaseSet`, a list of dicts, a pandas
            DataFrame, or a Ragas / DeepEval ``EvaluationDataset``. Rows use the harness's field names, or Ragas' (``user_input``,
            ``retrieved_contexts``, ``response``, ``reference``) or DeepEval's (``input``,
            ``actual_output``, ``retrieval_context``, ``expected_output``).
        metrics: None (every registered metric), a comma-separated string or a list of names or vendor
            prefixes, e.g. ``["inhouse.span", "deepeval"]``.
        judge: None (the offline reference judge), a :class:`harness.run.runner.JudgeConfig`, or a dict of
            its fields (``url``, ``model``, ``key_env``).
        report: True (default) builds the HTML and Markdown report with the project's builder
            (``harness.reports.build.report_for_run``); False builds none; a callable ``f(run_dir, threshold) -> path``
            is the report builder to use instead.
        divergence_threshold: the report's divergence threshold (default as ``harness run``).
        **options: ``out_dir`` (default :func:`default_out_dir`, said on stderr with ``progress``), ``run_id``, ``cache_mode``, ``cache_path``,
            ``concurrency``, ``progress``, ``retry_attempts``, ``call_timeout_s``, ``cell_timeout_s``,
            ``judge_rpm``, ``judge_tpm``, ``judge_window_s`` (the judge's pace: docs/pace.md), ``judge_batch``
            (True, or a dict of :class:`harness.judge.batch.BatchConfig`'s fields: the provider's batch API, docs/batch.md).

    Returns:
        An :class:`EvalResult`.

    Raises:
        ValueError: bad cases (naming the case and field), an unknown metric or option.
    """
    unknown = sorted(set(options) - set(RUN_OPTIONS))
    if unknown:
        raise TypeError(f"evaluate() got unknown option(s) {', '.join(unknown)}; known: {', '.join(RUN_OPTIONS)}")
    from harness.metric.vendor_env import switches  # noqa: PLC0415 - lazy: importing harness loads nothing
    from harness.run.runner import RunOptions  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

    options.setdefault("out_dir", default_out_dir())
    if options.get("judge_batch") is not None and not hasattr(options["judge_batch"], "as_spec"):
        from harness.judge.batch import BatchConfig  # noqa: PLC0415 - lazy: batch mode only

        jb = options.pop("judge_batch")
        if jb is not False:
            options["judge_batch"] = BatchConfig(**(jb if isinstance(jb, dict) else {}))
    # the vendor switches (telemetry off, no dotenv, ...) hold for this call only: the caller's environment after
    with switches():
        opts = RunOptions(cases=case_set(cases), metrics=metric_names(metrics), judge=judge_config(judge), **options)
        if opts.judge.is_reference:
            from harness.judge.reference import refuse_unannotated  # noqa: PLC0415 - lazy: importing harness loads nothing

            refuse_unannotated(opts.cases, API_HINT)
        result = in_own_loop(_evaluate, opts, report, divergence_threshold)
    if opts.progress:
        print(f"harness: run {result.run_id} stored in {result.run_dir}", file=sys.stderr)
    return result


API_HINT = 'pass judge={"url": ..., "model": ...} to score them with a real judge'
"""What the reference judge's refusal of unannotated cases tells an API user."""


def default_out_dir() -> str:
    """Where :func:`evaluate` keeps its runs unless ``out_dir`` is given: ``$HARNESS_OUT`` when set, else the
    user's data folder (``$XDG_DATA_HOME``, default ``~/.local/share``) ``/groundedness-harness/runs``, so a
    notebook or a script leaves nothing in its working directory and finds earlier runs again.

    >>> os.environ.get("HARNESS_OUT") is not None or default_out_dir().endswith("groundedness-harness/runs")
    True
    """
    if os.environ.get("HARNESS_OUT"):
        return os.environ["HARNESS_OUT"]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "groundedness-harness", "runs")


def in_own_loop(fn, *args):
    """Call ``fn(*args)`` here, or, when an event loop is running in this thread (a notebook), in a
    private thread (where ``asyncio.run`` may start its own loop) and wait for it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-evaluate") as pool:
        return pool.submit(fn, *args).result()


def _evaluate(opts, report, threshold: float | None) -> EvalResult:
    from harness.run.runner import run  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

    builder = report_builder(report)
    outcome = run(opts)
    report_path = builder(outcome.run_dir, threshold) if builder is not None else None
    return EvalResult(outcome.run_id, outcome.run_dir, outcome.store_path, report_path, outcome.counts,
                      [c.id for c in opts.cases], list(opts.metrics))


_report_builder = None
"""The builder ``report=True`` uses, set by the composition root (:func:`use_report_builder`, called by
``harness.console``, which ``harness.evaluate`` comes from): the engine never imports the report package (a
layer above it)."""


def use_report_builder(builder) -> None:
    """Make ``builder(run_dir, threshold) -> html_path`` the report ``evaluate(report=True)`` builds."""
    global _report_builder
    _report_builder = builder


def report_builder(report):
    """The builder ``evaluate(report=...)`` asks for: a callable as given, None for False, else the registered one.

    >>> report_builder(False) is None, report_builder(print) is print
    (True, True)
    """
    if callable(report):
        return report
    if not report:
        return None
    if _report_builder is None:
        raise RuntimeError("no report builder registered: call harness.evaluate (which registers the report "
                           "package's), or pass report=False or a builder")
    return _report_builder


def metric_names(metrics) -> list[str]:
    """Registered names from None, a comma-separated string or a list."""
    from harness.metric import registry  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

    if metrics is not None and not isinstance(metrics, str):
        metrics = list(metrics)
        if not metrics:
            raise ValueError("no metrics selected (metrics=None means all)")
    spec = metrics if metrics is None or isinstance(metrics, str) else ",".join(metrics)
    from harness.metric.extras import select  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

    names, notes = select(spec, registry.resolve(spec))
    for note in notes:

        warnings.warn(note, stacklevel=3)
    if not names:
        raise ValueError("no metrics selected")
    return names


def judge_config(judge):
    """A :class:`harness.run.runner.JudgeConfig` from None, a JudgeConfig or a dict of its fields."""
    from harness.run.runner import JudgeConfig  # noqa: PLC0415 - lazy: imported on first use, not when this module loads

    if judge is None:
        return JudgeConfig()
    if isinstance(judge, JudgeConfig):
        return judge
    if isinstance(judge, dict):
        unknown = sorted(set(judge) - {"url", "model", "key_env"})
        if unknown or not judge.get("url") or not judge.get("model"):
            raise ValueError("judge must be a dict with 'url' and 'model' (and optionally 'key_env', the NAME of "
                             f"the environment variable holding the key); got keys {sorted(judge)}")
        cfg = JudgeConfig(**judge)
        if cfg.key_env and not os.environ.get(cfg.key_env):
            raise ValueError(f"environment variable {cfg.key_env} is not set (it should hold the judge's key)")
        return cfg
    raise TypeError(f"judge must be None, a JudgeConfig or a dict, not {type(judge).__name__}")
