"""Lazy registry, fast --help, exit codes and the CLI's outputs."""
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

HEAVY = ("ragas", "deepeval", "trulens", "openai", "langchain_core", "pandas", "aiohttp", "nltk", "instructor")


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_help_imports_no_vendor_or_heavy_module():
    loaded = _modules_after("from harness_cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_metrics_command_imports_no_vendor_package():
    loaded = _modules_after("from harness_cli import main\nmain(['metrics'])")
    assert not loaded & {"ragas", "deepeval", "openai", "langchain_core", "instructor", "nltk", "pandas"}, loaded


def test_discovering_adapters_imports_no_vendor_package():
    loaded = _modules_after("from harness.metric import registry\nregistry.discover()")
    assert not loaded & {"ragas", "deepeval", "trulens", "openai", "langchain_core", "instructor", "nltk"}


@pytest.mark.parametrize("first", ["harness.metric", "adapters.deepeval.faithfulness", "harness.metric.registry"])
def test_telemetry_is_off_before_any_vendor_import(first):
    """Every way to a vendor passes through the plug-in contract, which sets the switches on import."""
    code = f"import {first}, os, json\nprint(json.dumps({{k: os.environ.get(k) for k in " \
           "['RAGAS_DO_NOT_TRACK', 'DEEPEVAL_TELEMETRY_OPT_OUT', 'DEEPEVAL_DISABLE_DOTENV']}))"
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "1", "DEEPEVAL_TELEMETRY_OPT_OUT": ""}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert json.loads(out.stdout) == {"RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
                                      "DEEPEVAL_DISABLE_DOTENV": "1"}


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
    from harness_cli import main

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
    from harness_cli import main

    assert main(argv + ["--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
