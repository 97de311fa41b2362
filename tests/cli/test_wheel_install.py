"""The built package as a pip user gets it: the wheel and the sdist carry no local run, cache or venv,
packaging/constraints.txt is the lock's own pins, and the wheel with one vendor extra alone, installed
into a fresh venv with those constraints, scores the canonical set from an empty directory.

The default run installs the Ragas extra only (the one whose unpinned instructor broke a pip install);
``-m wheel`` runs every extra alone (each a fresh venv from the package index or uv's cache)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from tests.conftest import ROOT

UV = os.path.join(ROOT, ".tools", "bin", "uv")
pytestmark = pytest.mark.skipif(not os.path.exists(UV), reason="uv is installed by scripts/setup.sh")
LEAKS = ("reports/out/", ".harness/", "tests/browser/artifacts/", ".venv", "store.sqlite", "build/lib")


def _tracked(dst: str) -> None:
    """Copy the checkout's tracked files (what a clone has) into ``dst``."""
    files = subprocess.run(["git", "--no-optional-locks", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = os.path.join(ROOT, f)
        if os.path.islink(src):   # harness/reports, harness/adapters, harness/console.py: kept as links
            os.makedirs(os.path.dirname(os.path.join(dst, f)) or dst, exist_ok=True)
            os.symlink(os.readlink(src), os.path.join(dst, f))
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dst, f)) or dst, exist_ok=True)
            shutil.copy2(src, os.path.join(dst, f))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A clone that has been used: a run's output, a cache and a stale build/ lie in it; then `uv build`."""
    src = str(tmp_path_factory.mktemp("clone"))
    _tracked(src)
    for leak in ("reports/out/run-1/report.md", "reports/out/run-1/spec.json", ".harness/cache.json",
                 "build/lib/reports/out/run-0/report.md"):
        os.makedirs(os.path.dirname(os.path.join(src, leak)), exist_ok=True)
        open(os.path.join(src, leak), "w").write("a team's production answer\n")
    dist = os.path.join(src, "dist")
    subprocess.run([UV, "build", "-q", "-o", dist], cwd=src, check=True)
    wheel = next(os.path.join(dist, f) for f in os.listdir(dist) if f.endswith(".whl"))
    sdist = next(os.path.join(dist, f) for f in os.listdir(dist) if f.endswith(".tar.gz"))
    return wheel, sdist


def test_no_local_file_enters_the_wheel_or_the_sdist(built):
    wheel, sdist = built
    names = zipfile.ZipFile(wheel).namelist()
    assert "harness/cases/data/canonical.jsonl" in names or any(n.endswith("canonical.jsonl") for n in names)
    assert [n for n in names if any(leak in n for leak in LEAKS)] == []
    # one import name: the top-level reports/, adapters/ and harness_cli.py are inside harness/ (issue 34)
    assert {n.split("/")[0] for n in names if not n.startswith("groundedness_harness-")} == {"harness"}
    assert "harness/reports/build.py" in names and "harness/adapters/inhouse/span.py" in names
    # a vendor's switches ship with its adapter; its test kit (adapters/<vendor>/kit/, test code) does not
    assert "harness/adapters/ragas/switches.py" in names and [n for n in names if "/kit/" in n] == []
    assert "harness/console.py" in names and "harness/reports/review/static/review.js" in names
    members = [m.split("/", 1)[-1] for m in tarfile.open(sdist).getnames()]
    assert "pyproject.toml" in members and "uv.lock" in members
    assert [m for m in members if any(leak in m for leak in LEAKS)] == []


def test_the_constraints_file_is_the_locks_own_pins(tmp_path):
    shipped = open(os.path.join(ROOT, "packaging", "constraints.txt")).read()
    fresh = subprocess.run([UV, "export", "--frozen", "--all-extras", "--no-extra", "azure", "--no-dev", "--no-hashes",
                            "--no-emit-project", "--no-header", "--no-annotate", "--format", "requirements-txt", "-q"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    pins = [line for line in shipped.splitlines() if line and not line.startswith("#")]
    assert pins == fresh.splitlines(), "packaging/constraints.txt is stale: run scripts/constraints.sh"
    assert any(p.startswith("instructor==") for p in pins)


def _install_and_score(built, tmp_path, extra: str, metric: str):
    wheel, _ = built
    venv = str(tmp_path / "venv")
    py = os.path.realpath(sys.executable)
    subprocess.run([UV, "venv", "-q", "--python", py, venv], check=True)
    env = {**os.environ, "UV_LINK_MODE": "hardlink"}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([UV, "pip", "install", "-q", "--python", os.path.join(venv, "bin", "python"),
                    "-c", os.path.join(ROOT, "packaging", "constraints.txt"), f"{wheel}[{extra}]"],
                   check=True, env=env)
    empty = tmp_path / "empty"
    empty.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "PYTHONPATH", "VIRTUAL_ENV"))}
    listing = subprocess.run([os.path.join(venv, "bin", "harness"), "metrics"], cwd=empty, env=clean,
                             capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if line.split() and line.split()[0] == metric)
    assert "unavailable" not in row, row
    run = subprocess.run([os.path.join(venv, "bin", "harness"), "run", "--metrics", metric, "--no-report",
                          "--no-progress"], cwd=empty, env=clean, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "errored 0" in run.stdout, run.stdout[-2000:]
    scored = re.search(rf"{re.escape(metric)}\s+scored (\d+)", run.stdout)
    assert scored and int(scored.group(1)) >= 15, run.stdout[-2000:]   # the canonical set: 24 cases


def test_the_wheel_with_ragas_alone_scores_the_canonical_set(built, tmp_path):
    _install_and_score(built, tmp_path, "ragas", "ragas.faithfulness")


EXTRAS = {"deepeval": "deepeval.faithfulness", "trulens": "trulens.groundedness", "phoenix": "phoenix.faithfulness",
          "opik": "opik.hallucination", "mlflow": "mlflow.groundedness"}


@pytest.mark.wheel
@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_the_wheel_with_each_extra_alone_scores_the_canonical_set(built, tmp_path, extra):
    _install_and_score(built, tmp_path, extra, EXTRAS[extra])
