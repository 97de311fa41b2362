"""Vendor imports are paid once per run, for the selected metrics only, with the vendor switches forced first.

The ``harness`` command runs in a subprocess with an import spy (a ``sitecustomize`` on ``PYTHONPATH``, so every
Python process the command starts loads it: the runner, its forkserver; a forked worker inherits it). The spy is a
``sys.meta_path`` finder that writes one line per import of a vendor module (an import: the import system is
looking for a module to load and finds it; a probe with ``importlib.util.find_spec`` is not one), at the moment it is first
imported in that process, with the process's id, its parent's, and the vendor switches then in its environment. It writes
as the import happens, so a process that ends with ``os._exit`` (a forked worker) is seen too."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from harness.metric.vendor_env import forced

from tests.conftest import CANONICAL, ROOT

VENDORS = ("ragas", "deepeval", "trulens", "litellm", "opik", "mlflow", "phoenix", "azure")

SPY = """
import json, os, sys
_DIR = os.environ.get("IMPORT_SPY_DIR")
_VENDORS = set(json.loads(os.environ.get("IMPORT_SPY_VENDORS", "[]")))
_KEYS = json.loads(os.environ.get("IMPORT_SPY_KEYS", "[]"))

class _Spy:
    def find_spec(self, name, path=None, target=None):
        # an import, not a probe (importlib.util.find_spec asks the finders too, and imports nothing)
        importing = sys._getframe(2).f_code.co_name == "_find_and_load_unlocked"
        if importing and name.partition(".")[0] in _VENDORS and self._found(name, path, target):
            line = json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "name": name,
                               "env": {k: os.environ.get(k) for k in _KEYS}})
            with open(os.path.join(_DIR, "imports.jsonl"), "a") as fh:
                fh.write(line + "\\n")
        return None

    def _found(self, name, path, target):   # the module is there (an attempt at a missing one loads nothing)
        finders = [f for f in sys.meta_path if f is not self and hasattr(f, "find_spec")]
        return any(f.find_spec(name, path, target) is not None for f in finders)

if _DIR:
    sys.meta_path.insert(0, _Spy())
"""


def _run(tmp_path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict], int]:
    """``harness <args>`` under the spy: (the finished process, the vendor imports it saw, the command's pid)."""
    spy = tmp_path / "spy"
    spy.mkdir(exist_ok=True)
    (spy / "sitecustomize.py").write_text(SPY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(spy), ROOT]), "IMPORT_SPY_DIR": str(spy),
           "IMPORT_SPY_VENDORS": json.dumps(VENDORS), "IMPORT_SPY_KEYS": json.dumps(sorted(forced())),
           # a user's environment that would turn telemetry on: the switches are forced over it
           "RAGAS_DO_NOT_TRACK": "false", "DEEPEVAL_TELEMETRY_OPT_OUT": "0", "OPIK_TRACK_DISABLE": "false"}
    env.pop("HARNESS_WORKERS", None)
    p = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=900)
    done = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    log = spy / "imports.jsonl"
    seen = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return done, seen, p.pid


def _startup(run_dir) -> list[dict]:
    with sqlite3.connect(os.path.join(run_dir, "store.sqlite")) as db:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    return json.loads(meta.get("startup") or "[]")


def _run_args(tmp_path, run_id: str, metrics: str, *more: str) -> list[str]:
    return ["run", "--cases", CANONICAL, "--metrics", metrics, "--out", str(tmp_path / "out"), "--run-id", run_id,
            "--no-progress", "--no-report", *more]


def test_two_workers_import_the_selected_vendors_once_in_their_forkserver_with_the_switches_forced(tmp_path):
    done, seen, cli = _run(tmp_path, *_run_args(tmp_path, "two", "inhouse.span,deepeval.faithfulness",
                                                 "--workers", "2"))
    assert done.returncode == 0, done.stderr[-3000:]
    tops = [s for s in seen if "." not in s["name"]]   # a vendor package itself, the first time a process imports it
    # imported once, in one process: not the command's own, but its child (the forkserver) that the workers fork from
    assert [s["name"] for s in tops] == ["deepeval"], tops
    server = tops[0]["pid"]
    assert server != cli and tops[0]["ppid"] == cli
    # every vendor module any process imported, it imported with telemetry off, whatever the user's environment said
    assert seen and all(s["env"] == forced() for s in seen), [s for s in seen if s["env"] != forced()][:1]
    assert not {s["name"].partition(".")[0] for s in seen} - {"deepeval"}, "only the selected metric's vendor"
    # both workers scored cells, and both are forks of that process (its imports, done once, are in their facts)
    facts = _startup(tmp_path / "out" / "two")
    assert sorted(f["worker"] for f in facts) == [0, 1], facts
    assert {f["preload"]["pid"] for f in facts} == {server}
    assert all(f["preload"]["metrics"] == ["deepeval.faithfulness"] and not f["preload"]["failed"] for f in facts)
    # what a worker imported afterwards (a vendor submodule on its first cell) is its own, never the package again
    assert all(s["pid"] == server or "." in s["name"] for s in seen)


def test_the_in_house_metric_imports_no_vendor_in_any_process(tmp_path):
    for run_id, more in (("default", ()), ("two", ("--workers", "2"))):
        done, seen, _ = _run(tmp_path, *_run_args(tmp_path, run_id, "inhouse.span", *more))
        assert done.returncode == 0, done.stderr[-3000:]
        assert seen == [], (run_id, sorted({s["name"] for s in seen})[:20])
    assert len(_startup(tmp_path / "out" / "two")) == 2   # the two workers did start (from a forkserver of their own)


def test_help_and_the_metrics_list_import_no_vendor(tmp_path):
    for args in (["--help"], ["run", "--help"], ["metrics"]):
        done, seen, _ = _run(tmp_path, *args)
        assert done.returncode == 0, done.stderr[-3000:]
        assert seen == [], (args, sorted({s["name"] for s in seen})[:20])


def test_the_runner_and_the_preload_name_the_same_variable():
    from harness.run import preload, workers

    assert workers.PRELOAD_ENV == preload.ENV
