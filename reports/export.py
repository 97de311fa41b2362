"""``harness export RUN --format jsonl|parquet|mlflow``: a run's tables for other tools.

- ``jsonl``: ``cells.jsonl``, ``units.jsonl``, ``calls.jsonl`` (one JSON object per row; no extra needed);
- ``parquet``: the same three tables as ``.parquet`` (needs pyarrow: the ``parquet`` extra);
- ``mlflow``: one MLflow run with the run spec as params, per-metric means (and scored counts) as
  metrics, and the cells table and the HTML report as artifacts (needs the ``mlflow`` extra,
  ``mlflow-skinny``). It goes to a local tracking folder (``file:`` store) unless the user set a
  tracking URI (``MLFLOW_TRACKING_URI``). To read that folder back with MLflow:
  ``MLFLOW_ALLOW_FILE_STORE=true`` and ``MlflowClient(tracking_uri="file:///.../mlruns")``.

Reads the store only; never re-scores.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

from harness.judge.loopback import scoped_env
from harness.reports.analysis import mlflow_rows
from harness.reports.analysis.data import load_run
from harness.store.runstore import RunStore

TABLES = ("cells", "units", "calls")
FORMATS = ("jsonl", "parquet", "mlflow")
EXPERIMENT = "groundedness-harness"


def tables(store_path: str) -> dict:
    """name -> DataFrame for every exported table (JSON text columns parsed back to values)."""

    store = RunStore.open(store_path)
    try:
        out = {t: getattr(store, t)() for t in TABLES}
    finally:
        store.close()
    for name, cols in (("cells", ("flags", "detail")), ("units", ("quotes", "detail"))):
        for c in cols:
            out[name][c] = [json.loads(v) if isinstance(v, str) else v for v in out[name][c]]
    return out


def to_jsonl(store_path: str, dest: str) -> list[str]:
    """Write ``<table>.jsonl`` for every table into ``dest``; return the paths."""
    os.makedirs(dest, exist_ok=True)
    paths = []
    for name, df in tables(store_path).items():
        path = os.path.join(dest, f"{name}.jsonl")
        df.to_json(path, orient="records", lines=True, force_ascii=False)
        paths.append(path)
    return paths


def to_parquet(store_path: str, dest: str) -> list[str]:
    """Write ``<table>.parquet`` for every table into ``dest`` (JSON columns as JSON text)."""
    try:
        import pyarrow  # noqa: F401, PLC0415 - lazy: optional extra
    except ImportError:
        from harness.metric.extras import install_line  # noqa: PLC0415 - lazy: needed only when the extra is missing

        raise RuntimeError(f"--format parquet needs pyarrow: {install_line('parquet')}") from None

    os.makedirs(dest, exist_ok=True)
    store = RunStore.open(store_path)
    paths = []
    try:
        for name in TABLES:
            path = os.path.join(dest, f"{name}.parquet")
            getattr(store, name)().to_parquet(path, index=False)
            paths.append(path)
    finally:
        store.close()
    return paths


def flat_params(spec: dict) -> dict[str, str]:
    """The run spec as MLflow params (flat keys, string values).

    >>> p = flat_params({"run_id": "r", "judge": {"kind": "reference", "url": None},
    ...                  "metrics": [{"name": "inhouse.span", "version": "2"}], "packages": {"ragas": "0.4.3"}})
    >>> p["judge.kind"], p["metric.inhouse.span.version"], p["package.ragas"], "judge.url" in p
    ('reference', '2', '0.4.3', False)
    """
    out: dict[str, str] = {}
    for k, v in spec.items():
        if k == "metrics":
            for m in v or []:
                out[f"metric.{m['name']}.version"] = str(m.get("version"))
        elif k == "packages":
            out.update({f"package.{p}": str(ver) for p, ver in (v or {}).items() if ver})
        elif isinstance(v, dict):
            out.update({f"{k}.{kk}": str(vv) for kk, vv in v.items() if vv is not None and not isinstance(vv, dict)})
        elif v is not None:
            out[k] = str(v)
    return {k: val[:6000] for k, val in out.items()}


def metric_values(cells) -> dict[str, float]:
    """Per-metric mean over scored cells, and the count of each status, as MLflow metrics."""
    out: dict[str, float] = {}
    for metric, d in cells.groupby("metric", sort=True):
        scored = d[d["status"] == "scored"]["score"].astype(float)
        if len(scored):
            out[f"{metric}.mean"] = float(scored.mean())
        for status, n in d["status"].value_counts().items():
            out[f"{metric}.{status}"] = float(n)
    return out


def tracking_uri(tracking_dir: str) -> str:
    """The user's tracking URI if one is set (``MLFLOW_TRACKING_URI``), else a ``file:`` store in
    ``tracking_dir``. MLflow 3 keeps its file store in maintenance mode behind
    ``MLFLOW_ALLOW_FILE_STORE=true``; the local folder sets it for this process (reading the folder
    back with MLflow needs the same variable)."""

    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"]
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return Path(os.path.abspath(tracking_dir)).as_uri()


def to_mlflow(run_dir: str, store_path: str, tracking_dir: str,
              experiment: str = EXPERIMENT) -> tuple[str, str, str]:
    """Log the run as one MLflow run; return (tracking URI, MLflow run id, ``new`` | ``updated`` |
    ``unchanged``).

    The same harness run always maps to the same MLflow run: it is found by its tag ``harness.run_id``
    in the experiment. An export of rows already exported (same ``harness.rows_digest``) changes nothing;
    a run that grew since (a resumed run) gets its table replaced, its metrics logged again and any new
    params added.

    MLflow prints its own "View run ... at: URL" lines when a run ends (to a tracking server): they go to stderr,
    with the command's other notes, so that stdout says only what the export did."""
    with contextlib.redirect_stdout(sys.stderr):
        return _to_mlflow(run_dir, store_path, tracking_dir, experiment)


def _to_mlflow(run_dir: str, store_path: str, tracking_dir: str, experiment: str) -> tuple[str, str, str]:
    try:
        from mlflow.tracking import MlflowClient  # noqa: PLC0415 - lazy: optional extra
    except ImportError:
        from harness.metric.extras import install_line  # noqa: PLC0415 - lazy: needed only when the extra is missing

        raise RuntimeError(f"--format mlflow needs MLflow: {install_line('mlflow')}") from None
    import time  # noqa: PLC0415 - lazy: only the mlflow export stamps metrics

    from mlflow.entities import Metric, Param  # noqa: PLC0415 - lazy: optional extra

    data = load_run(store_path)
    spec, cells = data.spec, data.cells
    table = mlflow_rows.rows(data)
    digest = mlflow_rows.digest(table)
    harness_id = str(spec.get("run_id") or os.path.basename(run_dir))
    uri = tracking_uri(tracking_dir)
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
    found = client.search_runs([exp_id], filter_string=f"tags.`harness.run_id` = '{harness_id}'", max_results=1)
    if found and found[0].data.tags.get("harness.rows_digest") == digest and found[0].info.status == "FINISHED":
        return uri, found[0].info.run_id, "unchanged"
    if found:
        rid, state, logged = found[0].info.run_id, "updated", found[0].data.params
    else:
        run = client.create_run(exp_id, run_name=harness_id,
                                tags={"harness.run_id": harness_id,
                                      "harness.judge": str((spec.get("judge") or {}).get("description"))})
        rid, state, logged = run.info.run_id, "new", {}
    try:
        now = int(time.time() * 1000)
        params = [Param(k, v) for k, v in flat_params(spec).items() if k not in logged]   # params never change
        for i in range(0, len(params), 100):
            client.log_batch(rid, params=params[i:i + 100])
        values = {**metric_values(cells), **mlflow_rows.agreement_metrics(data)}
        client.log_batch(rid, metrics=[Metric(k, v, now, 0) for k, v in values.items()])
        if found:   # log_table appends to an existing table: the old one goes first
            _delete_artifact(client, rid, mlflow_rows.ROWS_FILE)
        client.log_table(rid, data=table, artifact_file=mlflow_rows.ROWS_FILE)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cells.csv")
            cells.to_csv(path, index=False)
            client.log_artifact(rid, path)
        report = os.path.join(run_dir, "index.html")
        if os.path.isfile(report):
            client.log_artifact(rid, report, "report")
        _log_traces(client, uri, exp_id, rid, data, replace=bool(found))
        client.set_tag(rid, "harness.rows_digest", digest)
        client.set_terminated(rid, "FINISHED")
    except BaseException:
        client.set_terminated(rid, "FAILED")
        raise
    return uri, rid, state


def _log_traces(client, uri: str, exp_id: str, rid: str, data, replace: bool) -> None:
    """One MLflow trace per case, linked to the run (its evaluation view lists them): a root span with the
    question and the answer, a retriever span with the passages, and one assessment per metric (the score as
    its value, the status and the claim verdicts as its rationale). An updated run's old traces go first."""
    import mlflow  # noqa: PLC0415 - lazy: optional extra
    from mlflow.entities import AssessmentSource, SpanType  # noqa: PLC0415 - lazy: optional extra

    # each trace stored before its assessments; the user's own setting is put back afterwards
    with scoped_env("mlflow-export", lambda: {"MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"}):
        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment(experiment_id=exp_id)
        if replace:
            old = mlflow.search_traces(experiment_ids=[exp_id], run_id=rid, return_type="list")
            if old:
                client.delete_traces(exp_id, trace_ids=[t.info.trace_id for t in old])
        made = []
        with mlflow.start_run(run_id=rid):
            for t in mlflow_rows.traces(data):
                with mlflow.start_span(name=t["case_id"], span_type=SpanType.CHAIN) as root:
                    root.set_inputs({"question": t["question"]})
                    with mlflow.start_span(name="retrieved passages", span_type=SpanType.RETRIEVER) as ret:
                        ret.set_inputs({"query": t["question"]})
                        ret.set_outputs(t["passages"])
                    root.set_outputs({"answer": t["answer"]})
                    root.set_attribute("harness.case_id", t["case_id"])
                made.append((root.trace_id, t))
        for trace_id, t in made:
            for a in t["assessments"]:
                mlflow.log_feedback(trace_id=trace_id, name=a["name"], value=a["value"], rationale=a["rationale"],
                                    source=AssessmentSource(source_type="LLM_JUDGE", source_id=a["name"]),
                                    metadata={"harness.status": a["status"]})


def _delete_artifact(client, rid: str, path: str) -> None:
    """Remove one artifact of a run (the artifact store must support deleting: a local folder does)."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository  # noqa: PLC0415 - lazy: optional extra

    if any(f.path == path for f in client.list_artifacts(rid)):
        get_artifact_repository(client.get_run(rid).info.artifact_uri).delete_artifacts(path)
