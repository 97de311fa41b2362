"""Agreement statistics against hand-computed values, and `harness agree` on a real run store."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from harness.reports.analysis import agreement_stats as A

import pytest

from tests.conftest import ROOT

# Ten answers: the first four ungrounded by the humans. Scores: higher = better grounded.
TRUTH = [True, True, True, True, False, False, False, False, False, False]
SCORES = [0.0, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]
# At threshold 1.0 (score < 1 means ungrounded): predicted = T T T F F F F F F T
# -> tp 3 (answers 0-2), fn 1 (answer 3), fp 1 (answer 9), tn 5.


def test_confusion_at_the_default_threshold():
    p = A.at_threshold(TRUTH, SCORES, 1.0)
    assert p.confusion == A.Confusion(tp=3, fp=1, fn=1, tn=5)


def test_statistics_by_hand():
    p = A.at_threshold(TRUTH, SCORES, 1.0)
    assert p.accuracy == pytest.approx(8 / 10)
    assert p.precision == pytest.approx(3 / 4)            # 3 of the 4 flagged are ungrounded
    assert p.recall == pytest.approx(3 / 4)               # 3 of the 4 ungrounded are flagged
    assert p.balanced_accuracy == pytest.approx((3 / 4 + 5 / 6) / 2)   # = 19/24
    # kappa: po = 0.8; chance pe = (4*4 + 6*6) / 100 = 0.52; (0.8 - 0.52) / (1 - 0.52) = 7/12
    assert p.kappa == pytest.approx(7 / 12)


def test_auroc_by_hand():
    # Positive/negative pairs (4 x 6 = 24), 1 when the ungrounded answer scores lower, 1/2 on a tie:
    # 0.0 beats all six (6); each 0.5 beats five 1.0s and ties one 0.5 (5.5 x 2 = 11);
    # the 1.0 ties five 1.0s and loses to the 0.5 (2.5). (6 + 11 + 2.5) / 24 = 0.8125.
    assert A.auroc(TRUTH, SCORES) == pytest.approx(19.5 / 24)
    assert A.auroc([True, False], [0.0, 1.0]) == 1.0 and A.auroc([True, False], [1.0, 0.0]) == 0.0
    assert A.auroc([True, False], [0.5, 0.5]) == 0.5


def test_undefined_statistics_are_none():
    c = A.confusion([False, False], [False, False])
    assert A.recall(c) is None and A.precision(c) is None and A.balanced_accuracy(c) is None
    assert A.cohen_kappa(c) is None                         # both raters constant: chance agreement 1
    assert A.auroc([False, False], [0.1, 0.2]) is None
    assert A.cohen_kappa(A.Confusion(0, 0, 0, 0)) is None


def test_perfect_and_opposite_kappa():
    assert A.cohen_kappa(A.confusion([True, False, True, False], [True, False, True, False])) == 1.0
    assert A.cohen_kappa(A.confusion([True, False, True, False], [False, True, False, True])) == -1.0


def test_threshold_sweep_by_hand():
    pts = A.sweep(TRUTH, SCORES)
    assert [p.threshold for p in pts] == [0.0, 0.5, 1.0, 1.000001]
    t0, t05, t1, tall = pts
    assert t0.confusion == A.Confusion(0, 0, 4, 6) and t0.balanced_accuracy == 0.5 and t0.kappa == 0.0
    assert t0.precision is None
    # < 0.5 flags only answer 0: tp 1, fn 3, tn 6; kappa (0.7 - 0.58) / 0.42
    assert t05.balanced_accuracy == pytest.approx((1 / 4 + 1) / 2)
    assert t05.kappa == pytest.approx(0.12 / 0.42)
    assert tall.confusion == A.Confusion(4, 6, 0, 0) and tall.balanced_accuracy == 0.5
    assert A.best(pts) == t1


def test_vectorised_intervals_equal_the_plain_bootstrap():
    import numpy as np

    t = np.array(TRUTH)
    pred = np.array(SCORES) < 1.0
    s = np.array(SCORES)
    ci = A.binary_intervals(t, pred, resamples=300, seed=7)
    for name, fn in (("kappa", A.cohen_kappa), ("balanced_accuracy", A.balanced_accuracy),
                     ("precision", A.precision), ("recall", A.recall), ("accuracy", A.accuracy)):
        lo, hi, _ = A.bootstrap(lambda ix: fn(A.confusion(t[ix], pred[ix])), len(t), resamples=300, seed=7)
        assert ci[name] == pytest.approx((lo, hi)), name
    lo, hi, bad = A.bootstrap(lambda ix: A.auroc(t[ix], s[ix]), len(t), resamples=300, seed=7)
    assert A.auroc_interval(t, s, resamples=300, seed=7) == pytest.approx((lo, hi))
    assert ci["kappa"][0] < 7 / 12 < ci["kappa"][1]


def test_interval_of_constant_agreement_and_of_nothing():
    ci = A.binary_intervals([True, False] * 5, [True, False] * 5, resamples=100)
    assert ci["kappa"] == (1.0, 1.0) and ci["accuracy"] == (1.0, 1.0)
    assert A.binary_intervals([], [], resamples=10)["kappa"] == (None, None)
    assert A.bootstrap(lambda ix: None, 5, resamples=10) == (None, None, 10)


# --- on a run ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("agree")
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--metrics", "inhouse.span,baseline.similarity",
                        "--out", str(out), "--run-id", "a", "--no-progress"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return out / "a"


def _agree(*args):
    r = subprocess.run([sys.executable, "-m", "harness", "agree", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_agree_json_has_every_metric_with_intervals(run_dir):
    doc = json.loads(_agree(str(run_dir), "--json"))
    assert set(doc["metrics"]) == {"inhouse.span", "baseline.similarity"}
    m = doc["metrics"]["inhouse.span"]
    for key in ("n", "kappa", "kappa_ci", "balanced_accuracy", "auroc", "best_threshold", "precision", "recall"):
        assert key in m, key
    assert m["labelled"] == 24 and m["n"] == 21 and m["excluded"] == {"unscored": 3}
    assert m["kappa_ci"][0] <= m["kappa"] <= m["kappa_ci"][1]
    # in-house is the "not attributable" definition: with the reference judge its ceiling is perfect
    assert m["targets"]["not_attributable"]["kappa"] == 1.0
    assert m["claims"]["not_attributable"]["kappa"] == 1.0 and m["claims"]["not_attributable"]["not_covered"] == 0
    assert "ceiling" in doc["reading"] and "50" in doc["rule"]
    assert "too few labelled answers" in m["rule"]


def test_agree_text_names_the_reading_and_the_rule(run_dir):
    out = _agree(str(run_dir))
    assert "each definition's ceiling" in out and "at least 50 labelled answers" in out
    assert "inhouse.span" in out and "3 unscored" in out


def test_cells_that_are_not_scores_are_counted_not_dropped(run_dir, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    db = sqlite3.connect(copy / "store.sqlite")
    db.execute("UPDATE cells SET status='error', score=NULL, reason='x' WHERE metric='baseline.similarity' "
               "AND case_id='cookie-yield'")
    db.execute("UPDATE cells SET status='vendor_nan', score=NULL, reason='y' WHERE metric='baseline.similarity' "
               "AND case_id='product-age'")
    db.execute("DELETE FROM cells WHERE metric='baseline.similarity' AND case_id='leave-grounded'")
    db.commit()
    db.close()
    m = json.loads(_agree(str(copy), "--json"))["metrics"]["baseline.similarity"]
    assert m["excluded"] == {"error": 1, "vendor_nan": 1, "unscored": 1, "missing": 1}
    assert m["n"] == 24 - 4


def test_report_has_the_agreement_and_cascade_sections(run_dir):
    md = (run_dir / "report.md").read_text()
    assert "## Agreement with human labels" in md and "ceiling" in md
    html = (run_dir / "index.html").read_text()
    assert 'id="agreement"' in html


def test_a_run_without_labels_says_there_is_nothing_to_agree_with(tmp_path):
    import shutil

    from tests.conftest import CANONICAL

    bare = tmp_path / "bare.jsonl"
    with open(CANONICAL, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh][:2]
    bare.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "annotation"}) + "\n" for r in rows))
    # the reference judge refuses unannotated cases; the similarity baseline asks no judge, so a run of it works
    # with any judge: point it at an address that is never called
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", str(bare), "--metrics", "baseline.similarity",
                        "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "none", "--out", str(tmp_path),
                        "--run-id", "b", "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = _agree("b", "--out", str(tmp_path))
    assert "No case of this run carries human labels" in out and "judge-and-definition" in out
    doc = json.loads(_agree("b", "--out", str(tmp_path), "--json"))
    assert doc["metrics"]["baseline.similarity"]["n"] == 0 and doc["metrics"]["baseline.similarity"]["labelled"] == 0
    shutil.rmtree(tmp_path / "b")
