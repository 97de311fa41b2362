"""The CI job of docs/ci.md: record a real judge's answers once (with a key), then replay them in CI with no
key and no judge, and gate the run with ``harness check``."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def _harness(*argv, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=env, **kw)


def test_replay_a_recorded_cache_without_a_key_then_check(tmp_path):
    server = subprocess.Popen([sys.executable, "-m", "harness", "judge", "serve", "--port", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(server.stdout.readline())["url"]
        env = {**os.environ, "CI_JUDGE_KEY": "sk-test-not-a-real-key"}
        rec = _harness("run", "--metrics", "inhouse.span", "--judge-url", url, "--judge-model", "reference-judge",
                       "--judge-key-env", "CI_JUDGE_KEY", "--cache", "record", "--cache-path",
                       str(tmp_path / "judge-cache.sqlite"), "--out", str(tmp_path), "--run-id", "recorded",
                       "--no-progress", env=env)
        assert rec.returncode == 0, rec.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(30)
    env = {k: v for k, v in os.environ.items() if k != "CI_JUDGE_KEY"}
    ci = _harness("run", "--metrics", "inhouse.span", "--judge-url", url, "--judge-model", "reference-judge",
                  "--judge-key-env", "CI_JUDGE_KEY", "--cache", "replay", "--cache-path",
                  str(tmp_path / "judge-cache.sqlite"), "--out", str(tmp_path), "--run-id", "ci", "--no-progress",
                  env=env)
    assert ci.returncode == 0, ci.stderr[-2000:]
    junit = tmp_path / "junit.xml"
    gate = _harness("check", "ci", "--out", str(tmp_path), "--min", "inhouse.span=0.6", "--max-errors", "0",
                    "--junit", str(junit), env=env)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert _harness("check", "ci", "--out", str(tmp_path), "--min", "inhouse.span=0.8", env=env).returncode == 1
    assert 'failures="0"' in junit.read_text()
    cells = _harness("export", "ci", "--out", str(tmp_path), "--format", "jsonl", env=env)
    rows = [json.loads(x) for x in open(tmp_path / "ci" / "export" / "cells.jsonl")]
    assert cells.returncode == 0 and sum(r["cache_hits"] for r in rows) == sum(r["calls"] for r in rows) > 0
