"""``harness check``'s per-case thresholds and its baseline gate (a drop larger than the margin whose
paired interval lies below zero fails; JUnit names each failing case and metric), and the pytest entry
point (``harness.run.testing``) that scores cases inside a test suite through the same engine."""
from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from harness.console import main

from tests.conftest import CANONICAL, ROOT

WORSE = 8
"""Cases of the canonical set whose claims the 'worse' run labels not_found (so their span score falls)."""


def _worse_cases(path) -> list[str]:
    """The canonical cases, with the claims of the first WORSE cases that score above 0 relabelled
    not_found (no evidence): another system's weaker answers under the same ids."""
    changed, out = [], []
    for line in open(CANONICAL, encoding="utf-8"):
        obj = json.loads(line)
        claims = (obj.get("annotation") or {}).get("claims") or []
        if len(changed) < WORSE and claims and any(c["label"] == "supported" for c in claims):
            for c in claims:
                c["label"], c["evidence"] = "not_found", []
            changed.append(obj["id"])
        out.append(json.dumps(obj))
    path.write_text("\n".join(out) + "\n")
    return changed


def _run(tmp_path, run_id, cases=CANONICAL):
    assert main(["run", "--cases", str(cases), "--metrics", "inhouse.span", "--out", str(tmp_path),
                 "--run-id", run_id, "--no-progress", "--no-report"]) == 0


def test_baseline_and_per_case_gates_name_what_failed(tmp_path, capsys):
    worse = tmp_path / "worse.jsonl"
    changed = _worse_cases(worse)
    _run(tmp_path, "base")
    _run(tmp_path, "same")
    _run(tmp_path, "worse", worse)
    capsys.readouterr()
    # the same run again: no drop, passes
    assert main(["check", "same", "--out", str(tmp_path), "--baseline", "base", "--max-drop", "0.05"]) == 0
    assert "PASS  inhouse.span drop vs base <= 0.05" in capsys.readouterr().out
    # the weaker answers: the mean falls by more than the margin and the interval is below 0
    junit = tmp_path / "junit.xml"
    assert main(["check", "worse", "--out", str(tmp_path), "--baseline", "base", "--max-drop", "0.05",
                 "--min-case", "inhouse.span=0.5", "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "drop vs base" in ln)
    assert line.startswith("FAIL") and "paired case(s)" in line and changed[0] in line
    low, high = (float(x) for x in line.split("[")[1].split("]")[0].split(", "))
    assert low <= high < 0
    # a failing case names why, from the metric's own unit verdicts (the claims it did not find support for)
    case_line = next(ln for ln in out.splitlines() if ln.startswith("FAIL") and f"{changed[0]} / inhouse.span" in ln)
    assert "not supported (4 of 4 unit(s)): 'The cookies" in case_line and "[not_found]" in case_line, case_line
    # a generous margin lets the same drop through
    assert main(["check", "worse", "--out", str(tmp_path), "--baseline", "base", "--max-drop", "0.9"]) == 0
    # JUnit: one test case per case and metric, the failing ones named, non-scores skipped
    cases = ET.parse(junit).getroot().iter("testcase")
    failed = {tc.get("name") for tc in cases if tc.find("failure") is not None}
    assert {f"{c} / inhouse.span >= 0.5" for c in changed} <= failed
    assert any(n.startswith("inhouse.span drop vs base") for n in failed)
    root = ET.parse(junit).getroot()
    skipped = [tc for tc in root.iter("testcase") if tc.find("skipped") is not None]
    assert skipped and all("not a score" in tc.find("skipped").get("message") for tc in skipped)
    assert all(tc.get("classname") == "harness.check.worse.inhouse.span"
               for tc in root.iter("testcase") if " / " in tc.get("name"))


def test_bad_gate_options_exit_2(tmp_path, capsys):
    _run(tmp_path, "one")
    assert main(["check", "one", "--out", str(tmp_path), "--min-case", "inhouse.span"]) == 2
    assert "--min-case inhouse.span: expected METRIC=VALUE" in capsys.readouterr().err
    assert main(["check", "one", "--out", str(tmp_path), "--baseline", "nope"]) == 2
    assert main(["check", "one", "--out", str(tmp_path), "--baseline", "one", "--max-drop", "2"]) == 2


def test_the_pytest_entry_point_fails_a_test_naming_the_case_and_metric(tmp_path):
    worse = tmp_path / "worse.jsonl"
    changed = _worse_cases(worse)
    suite = tmp_path / "test_team_rag.py"
    suite.write_text(f'''
from harness.run.testing import assert_grounded

def test_canonical_is_grounded(groundedness):
    got = groundedness.check({str(CANONICAL)!r}, {{"inhouse.span": 0.5}})
    assert got.mean("inhouse.span") > 0.5 and got.score("cookie-yield", "inhouse.span") == 0.75

def test_weaker_answers_fail():
    assert_grounded({str(worse)!r}, {{"inhouse.span": 0.5}}, per_case=0.5, out_dir={str(tmp_path / "runs")!r})

import json, pytest
from harness.run.testing import case_params

@pytest.mark.parametrize("case", case_params({str(worse)!r}))
def test_each_answer(case):
    assert_grounded(case, {{"inhouse.span": 0.5}}, out_dir={str(tmp_path / "items")!r})

def test_rows_as_evaluate_takes_them():
    rows = [json.loads(line) for line in open({str(CANONICAL)!r})][:3]
    got = assert_grounded(rows, {{"inhouse.span": 0.0}}, out_dir={str(tmp_path / "rows")!r})
    assert len(got.cells) == 3
''')
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "harness.run.testing", "-q", "-p", "no:cacheprovider",
                        str(suite)], capture_output=True, text=True, cwd=str(tmp_path), timeout=600,
                       env={**__import__("os").environ, "PYTHONPATH": ROOT})
    assert "FAILED test_team_rag.py::test_weaker_answers_fail" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert "test_canonical_is_grounded FAILED" not in r.stdout and "::test_rows_as_evaluate_takes_them" not in r.stdout
    # one item per case: each weakened case fails on its own, and the items of well-grounded cases pass
    n_items = sum(1 for line in open(worse) if line.strip())
    failed_items = r.stdout.count("FAILED test_team_rag.py::test_each_answer[")
    assert all(f"FAILED test_team_rag.py::test_each_answer[{c}]" in r.stdout for c in changed)
    assert len(changed) <= failed_items < n_items
    assert f"{changed[0]} / inhouse.span: 0.000 < 0.5" in r.stdout


def test_a_lower_is_better_metric_is_gated_in_its_own_direction(tmp_path, capsys):
    """Opik's hallucination score (0 = faithful): ``--min`` on it is bad input naming ``--max``; a rise
    against the baseline is a drop; the pytest helper reads its threshold as a ceiling."""
    from harness.run.testing import Scores

    worse = tmp_path / "worse.jsonl"
    changed = _worse_cases(worse)
    for rid, cases in (("base", CANONICAL), ("worse", worse)):
        assert main(["run", "--cases", str(cases), "--metrics", "opik.hallucination,inhouse.span", "--out",
                     str(tmp_path), "--run-id", rid, "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["check", "base", "--out", str(tmp_path), "--min", "opik.hallucination=0.5"]) == 2
    assert "a floor is the wrong gate; use --max opik.hallucination=0.5" in capsys.readouterr().err
    assert main(["check", "base", "--out", str(tmp_path), "--max-case", "inhouse.span=0.5"]) == 2
    assert "a ceiling is the wrong gate; use --min-case inhouse.span=0.5" in capsys.readouterr().err
    # the worse answers: Opik's score rises; the gate reads that as the drop it is
    assert main(["check", "worse", "--out", str(tmp_path), "--baseline", "base", "--max-drop", "0.05",
                 "--max-case", "opik.hallucination=0.5"]) == 1
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith(("PASS", "FAIL")) and "opik.hallucination drop" in ln)
    assert line.startswith("FAIL") and "a rise is a drop" in line and changed[0] in line, out
    low, high = (float(x) for x in line.split("[")[1].split("]")[0].split(", "))
    assert 0 < low <= high
    assert f"FAIL  {changed[0]} / opik.hallucination <= 0.5: score 1.0000" in out
    # the base run's mean is low (faithful): a ceiling above it holds, one below it fails
    assert main(["check", "base", "--out", str(tmp_path), "--max", "opik.hallucination=0.5"]) == 0
    assert main(["check", "base", "--out", str(tmp_path), "--max", "opik.hallucination=0.0"]) == 1
    # the pytest helper: the threshold of a lower-is-better metric is a ceiling
    got = Scores("r", str(tmp_path), (("a", "opik.hallucination", "scored", 0.4, "why"),
                                      ("a", "inhouse.span", "scored", 0.4, "")))
    assert got.failures({"opik.hallucination": 0.5, "inhouse.span": 0.3}) == []
    assert got.failures({"opik.hallucination": 0.2}, per_case=0.3) == [
        "opik.hallucination: mean 0.400 > (lower is better) 0.2", "a / opik.hallucination: 0.400 > (lower is better) 0.3 (why)"]


def test_a_baseline_made_with_another_setup_is_refused_unless_allowed(tmp_path, capsys):
    """A score change from the setup alone (here the similarity threshold; likewise the judge, a metric or vendor
    version, injected faults) is not a regression: the gate says what differs and refuses, unless told."""
    for run_id, extra in (("a", []), ("b", ["--similarity-threshold", "0.6"])):
        assert main(["run", "--cases", CANONICAL, "--metrics", "baseline.similarity", "--out", str(tmp_path),
                     "--run-id", run_id, "--no-progress", "--no-report", *extra]) == 0
    capsys.readouterr()
    assert main(["check", "b", "--out", str(tmp_path), "--baseline", "a"]) == 2
    err = capsys.readouterr().err
    assert "--baseline a ran with another setup than b: baseline.similarity arguments:" in err
    assert "--allow-setup-change" in err and len(err.strip().splitlines()) == 1
    rc = main(["check", "b", "--out", str(tmp_path), "--baseline", "a", "--allow-setup-change"])
    out = capsys.readouterr().out
    assert rc in (0, 1) and "baseline setup differs (--allow-setup-change): baseline.similarity arguments" in out
    assert "baseline.similarity drop vs a" in out
