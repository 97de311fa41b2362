"""Lazy registry, fast --help, exit codes and the CLI's outputs."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import CANONICAL, ROOT

HEAVY = ("ragas", "deepeval", "trulens", "openai", "langchain_core", "pandas", "aiohttp", "nltk", "instructor")


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_help_imports_no_vendor_or_heavy_module():
    loaded = _modules_after("from harness.console import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_metrics_command_imports_no_vendor_package():
    loaded = _modules_after("from harness.console import main\nmain(['metrics'])")
    assert not loaded & {"ragas", "deepeval", "openai", "langchain_core", "instructor", "nltk", "pandas"}, loaded


def test_discovering_adapters_imports_no_vendor_package():
    loaded = _modules_after("from harness.metric import registry\nregistry.discover()")
    assert not loaded & {"ragas", "deepeval", "trulens", "openai", "langchain_core", "instructor", "nltk"}


SWITCHES = ["RAGAS_DO_NOT_TRACK", "DEEPEVAL_TELEMETRY_OPT_OUT", "DEEPEVAL_DISABLE_DOTENV", "LANGSMITH_TRACING"]


@pytest.mark.parametrize("first", ["harness.metric", "harness.adapters.deepeval.faithfulness", "harness.metric.registry",
                                   "harness.run.testing", "harness.api"])
def test_importing_any_part_changes_no_environment_variable(first):
    """A notebook or a pytest session that imports the harness (or loads its plugin) keeps its environment:
    a user's LANGSMITH_TRACING=true stays true, an unset switch stays unset."""
    code = f"import os, json\nbefore = dict(os.environ)\nimport {first}\nprint(json.dumps(dict(os.environ) == before))"
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "1", "LANGSMITH_TRACING": "true"}
    for k in ("DEEPEVAL_TELEMETRY_OPT_OUT", "DEEPEVAL_DISABLE_DOTENV"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "true", out.stdout + out.stderr[-2000:]


def test_the_switches_hold_when_a_vendor_is_imported_and_are_gone_after_evaluate():
    """``harness.evaluate`` in a team's process: the vendor is imported with telemetry off and no dotenv (seen by an
    import hook at the moment deepeval is first imported), and after the call every variable is the caller's."""
    code = f"""
import json, os, sys
KEYS = {SWITCHES!r}
seen = {{}}
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "deepeval" and not seen:
            seen.update({{k: os.environ.get(k) for k in KEYS}})
        return None
sys.meta_path.insert(0, Hook())
import harness
before = dict(os.environ)
harness.evaluate({CANONICAL!r}, metrics=["deepeval.faithfulness"], report=False, progress=False,
                 out_dir=sys.argv[1])
import deepeval.telemetry.client as telemetry
print(json.dumps({{"seen": seen, "after": [k for k in set(before) | set(os.environ)
                                           if before.get(k) != os.environ.get(k)],
                  "backend": type(telemetry.get_backend()).__name__}}))
"""
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "1", "LANGSMITH_TRACING": "true", "HARNESS_WORKERS": "1"}
    for k in ("DEEPEVAL_TELEMETRY_OPT_OUT", "DEEPEVAL_DISABLE_DOTENV"):
        env.pop(k, None)
    with tempfile.TemporaryDirectory() as out_dir:
        out = subprocess.run([sys.executable, "-c", code, out_dir], cwd=ROOT, capture_output=True, text=True, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["seen"] == {"RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
                           "DEEPEVAL_DISABLE_DOTENV": "1", "LANGSMITH_TRACING": "false"}, out.stderr[-2000:]
    assert got["after"] == [], got
    # DeepEval sends what it counted from an exit hook, reading the opt-out then: its backend stays the no-op one
    assert got["backend"] == "NoopBackend", got


def test_importing_the_package_has_no_side_effect():
    code = "import os, sys\nbefore = dict(os.environ); mods = set(sys.modules)\nimport harness\n" \
           "print(dict(os.environ) == before, sorted(m for m in set(sys.modules) - mods if m.startswith('harness')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "True ['harness']", out.stdout + out.stderr


def test_the_public_api_is_curated():
    import harness

    assert set(harness.__all__) == {"evaluate", "EvalResult", "Case", "Metric", "register", "__version__"}
    from harness.core.records import Case
    from harness.metric import Metric, register

    assert (harness.Case, harness.Metric, harness.register) == (Case, Metric, register)
    assert callable(harness.evaluate)


def test_unknown_metric_suggests_names():
    from harness.metric import registry

    with pytest.raises(registry.UnknownMetric, match=r"unknown metric 'inhouse.spam'; did you mean inhouse.span"):
        registry.get("inhouse.spam")
    assert registry.resolve("inhouse") == ["inhouse.span"]
    assert registry.resolve("inhouse.span,inhouse.span") == ["inhouse.span"]


def test_every_registered_adapter_meets_the_protocol():
    from harness.metric import registry
    from harness.metric.protocol import Metric

    for name in registry.names():
        cls = registry.get(name)
        assert isinstance(cls(), Metric), name
        assert cls.name == name and len(cls.short_name) <= 14 and cls.version


def test_run_prints_table_store_and_writes_csv(tmp_path):
    from harness.console import main

    csv_path = tmp_path / "s.csv"
    rc = main(["run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "t", "--no-progress",
               "--scores-csv", str(csv_path)])
    assert rc == 0
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "case_id,metric,score,status"
    assert "cookie-yield,inhouse.span,0.75,scored" in lines
    assert "empty-answer,inhouse.span,,unscored" in lines


@pytest.mark.parametrize("argv,message", [
    (["run", "--metrics", "ragas.faith"], "unknown metric 'ragas.faith'"),
    (["run", "--judge-url", "http://127.0.0.1:9/v1"], "--judge-url needs --judge-model"),
    (["run", "--judge-model", "gpt-4o-mini-2024-07-18", "--judge-key-env", "HARNESS_TEST_UNSET_KEY"],
     "environment variable HARNESS_TEST_UNSET_KEY is not set"),
    (["run", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["run", "--ray", "auto", "--no-pin"], "--no-pin is for local worker processes"),
    (["run", "--divergence-threshold", "1.5"], "--divergence-threshold must be between 0 and 1, got 1.5"),
])
def test_bad_options_exit_2(argv, message, capsys, tmp_path):
    from harness.console import main

    assert main(argv + ["--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
