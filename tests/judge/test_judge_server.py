"""The standalone reference judge: a run records through it as if it were remote, then replays offline."""
import csv
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import CANONICAL, ROOT


def _harness(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)


@pytest.fixture
def server():
    p = subprocess.Popen([sys.executable, "-m", "harness", "judge", "serve", "--port", "0", "--cases", CANONICAL],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        info = json.loads(line)
        yield {**info, "process": p}
    finally:
        p.terminate()
        p.wait(10)


def _scores(path):
    with open(path) as fh:
        return {(r["case_id"], r["metric"]): (r["score"], r["status"]) for r in csv.DictReader(fh)}


def test_record_through_the_server_then_replay_offline(server, tmp_path):
    assert server["url"].startswith("http://127.0.0.1:") and server["cases"] >= 18
    cache = tmp_path / "cache.sqlite"
    common = ["--metrics", "inhouse.span", "--out", str(tmp_path), "--cache-path", str(cache), "--no-progress",
              "--judge-model", "reference-judge"]
    rec = _harness("run", *common, "--judge-url", server["url"], "--cache", "record", "--run-id", "rec",
                   "--scores-csv", str(tmp_path / "rec.csv"))
    assert rec.returncode == 0, rec.stderr
    assert "judge: reference-judge at http://127.0.0.1" in rec.stdout
    ref = _harness("run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "ref", "--no-progress",
                   "--scores-csv", str(tmp_path / "ref.csv"))
    assert ref.returncode == 0, ref.stderr
    assert _scores(tmp_path / "rec.csv") == _scores(tmp_path / "ref.csv")   # same answers as the embedded judge

    # replay: the server is gone (its URL points nowhere now), and nothing is called. The same URL: the
    # cache is keyed by the judge's identity (base URL + model id), so another URL's answers never serve it
    server["process"].terminate()
    server["process"].wait(10)
    rep = _harness("run", *common, "--judge-url", server["url"], "--cache", "replay", "--run-id", "rep",
                   "--scores-csv", str(tmp_path / "rep.csv"))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert _scores(tmp_path / "rep.csv") == _scores(tmp_path / "rec.csv")
    assert _scores(tmp_path / "rec.csv")[("cookie-yield", "inhouse.span")] == ("0.75", "scored")
    other = _harness("run", *common, "--judge-url", "http://127.0.0.1:9/v1", "--cache", "replay", "--run-id", "other")
    assert other.returncode == 1 and "replay miss" in other.stdout     # another judge: not its answers


def test_replay_miss_is_a_clear_cell_error(tmp_path):
    out = _harness("run", "--metrics", "inhouse.span", "--out", str(tmp_path), "--no-progress", "--run-id", "miss",
                   "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "reference-judge", "--cache", "replay",
                   "--cache-path", str(tmp_path / "empty.sqlite"))
    assert out.returncode == 1
    assert "replay miss: no cached response for cell miss/cookie-yield/inhouse.span" in out.stdout
