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

import json
import os
import tempfile
from pathlib import Path

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
        from harness.metric.extras import install_line  # noqa: PLC0415 - lazy: optional import, its absence is handled here

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


def to_mlflow(run_dir: str, store_path: str, tracking_dir: str, experiment: str = EXPERIMENT) -> tuple[str, str]:
    """Log the run as one MLflow run; return (tracking URI, MLflow run id)."""
    try:
        from mlflow.tracking import MlflowClient  # noqa: PLC0415 - lazy: optional extra
    except ImportError:
        from harness.metric.extras import install_line  # noqa: PLC0415 - lazy: optional import, its absence is handled here

        raise RuntimeError(f"--format mlflow needs MLflow: {install_line('mlflow')}") from None


    store = RunStore.open(store_path)
    try:
        spec, cells = store.spec(), store.cells()
    finally:
        store.close()
    uri = tracking_uri(tracking_dir)
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    exp_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
    run = client.create_run(exp_id, run_name=str(spec.get("run_id") or os.path.basename(run_dir)),
                            tags={"harness.run_id": str(spec.get("run_id")), "harness.judge":
                                  str((spec.get("judge") or {}).get("description"))})
    rid = run.info.run_id
    try:
        import time  # noqa: PLC0415 - lazy: optional import, its absence is handled here

        from mlflow.entities import Metric, Param  # noqa: PLC0415 - lazy: optional extra

        now = int(time.time() * 1000)
        params = [Param(k, v) for k, v in flat_params(spec).items()]
        for i in range(0, len(params), 100):
            client.log_batch(rid, params=params[i:i + 100])
        client.log_batch(rid, metrics=[Metric(k, v, now, 0) for k, v in metric_values(cells).items()])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cells.csv")
            cells.to_csv(path, index=False)
            client.log_artifact(rid, path)
        report = os.path.join(run_dir, "index.html")
        if os.path.isfile(report):
            client.log_artifact(rid, report, "report")
        client.set_terminated(rid, "FINISHED")
    except BaseException:
        client.set_terminated(rid, "FAILED")
        raise
    return uri, rid
