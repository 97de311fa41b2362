"""What the harness writes stays readable and in its place whatever the input holds (issue 33, item 4): JUnit XML
parses with U+FFFE / U+FFFF in a case id; report.md and index.html carry no raw ESC or BEL; matplotlib's font
cache goes to the harness's cache folder, not ~/.cache/matplotlib or ~/.config; git never takes the checkout's
index lock; an NLI model is hashed a block at a time; Ray's refusal keeps its cause; ``judge serve`` answers a
metric it has no rubric for with a 400 naming it (a 5xx would be retried)."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

from harness.cases.load import CaseSet

from tests.conftest import ROOT


def test_junit_parses_with_the_noncharacters_xml_forbids(tmp_path, canonical):
    from harness.console import main
    from harness.judge.faults import FaultInjector, FaultSpec
    from harness.run.runner import RunOptions, run

    case = dataclasses.replace(canonical.cases[0], id="bad\ufffeid\uffff")
    run(RunOptions(cases=CaseSet(canonical.path, (case,), canonical.sha256), metrics=["inhouse.span"],
                   out_dir=str(tmp_path), run_id="c", progress=False, workers=1, retry_attempts=1,
                   upstream_wrapper=FaultInjector(FaultSpec.parse("500=1"))))
    path = tmp_path / "junit.xml"
    assert main(["check", "c", "--out", str(tmp_path), "--max-errors", "0", "--junit", str(path)]) == 1
    failure = ET.parse(path).getroot().find("./testsuite/testcase/failure")   # well-formed XML 1.0
    assert "bad\\ufffeid\\uffff/inhouse.span" in failure.get("message")


def test_report_md_and_html_escape_esc_and_bel_of_case_ids(tmp_path, canonical, capsys):
    from harness.console import main

    from tests.helpers.synthetic import synthetic_run

    hostile = "ring\x07the\x1b[2Jbell"
    cases = [dataclasses.replace(canonical.cases[0], id=hostile), *canonical.cases[1:3]]
    run = str(tmp_path / "run")
    synthetic_run(run, CaseSet(canonical.path, tuple(cases), canonical.sha256), run_id="esc")
    assert main(["report", run]) == 0, capsys.readouterr().err
    for name in ("report.md", "index.html"):
        text = open(os.path.join(run, name), encoding="utf-8").read()
        assert "\x1b" not in text and "\x07" not in text, name
    assert "ring\\x07the\\x1b" in open(os.path.join(run, "report.md"), encoding="utf-8").read()


def test_matplotlib_writes_its_cache_in_the_harness_cache_folder_only(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    env["HOME"] = str(home)
    code = "from harness.reports.render.plots import _figure, _png; assert _png(_figure(1, 1))[:4] == b'\\x89PNG'"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(home)) == [".cache"] and os.listdir(home / ".cache") == ["groundedness-harness"]
    assert (home / ".cache" / "groundedness-harness" / "matplotlib").is_dir()


def test_git_is_asked_without_optional_locks(monkeypatch):
    import harness.run.spec as spec

    calls = []

    def record(argv, **kw):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, "0123abc\n", "")

    monkeypatch.setattr(spec.subprocess, "run", record)
    assert spec.git_hash() == "0123abc-dirty"
    assert len(calls) == 2 and all(argv[:2] == ["git", "--no-optional-locks"] for argv in calls)


def test_the_nli_model_is_hashed_a_block_at_a_time(tmp_path, monkeypatch):
    import hashlib

    import harness.adapters.nli.local as local

    path = tmp_path / "big.onnx"
    path.write_bytes(os.urandom(3 * 2**20 + 5))
    reads = []
    real_open = open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def read(self, n=-1):
            reads.append(n)
            return self.fh.read(n)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(local, "open", lambda p, mode="r", **k: Spy(real_open(p, mode, **k)), raising=False)
    assert local.sha256_of(str(path)) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert reads and all(0 < n <= 2**20 for n in reads)


def test_a_ray_refusal_keeps_its_cause():
    from harness.run.rayrun import _cause

    long = RuntimeError("Failed to connect to GCS.\n" + "detail " * 200 + "\nCause: the cluster runs Ray 2.9, this is 2.40.")
    got = _cause(long)
    assert "\n" not in got and got.startswith("Failed to connect to GCS.")
    assert got.endswith("Cause: the cluster runs Ray 2.9, this is 2.40.") and len(got) <= 405
    assert _cause(RuntimeError("short")) == "short"


def test_judge_serve_answers_a_metric_it_cannot_judge_with_a_400_naming_it(canonical):
    from harness.judge.gateway import Gateway
    from harness.judge.upstream import ReferenceUpstream

    case = canonical.cases[0]
    gw = Gateway(ReferenceUpstream({("r", case.id): case}), keep_ledger=False).start()
    try:
        req = urllib.request.Request(f"{gw.base}/v1/chat/completions", method="POST",
                                     data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
                                     headers={"Content-Type": "application/json",
                                              "X-Harness-Cell": f"r/{case.id}/azure.groundedness"})
        try:
            urllib.request.urlopen(req, timeout=60)
            raise AssertionError("answered 200")
        except urllib.error.HTTPError as e:
            status, body = e.code, json.loads(e.read())
    finally:
        gw.stop()
    assert status == 400                       # a client error: no vendor retries it
    assert "'azure.groundedness'" in body["error"]["message"] and "no rubric" in body["error"]["message"]
