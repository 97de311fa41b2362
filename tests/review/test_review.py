"""``harness review`` without a browser: the sample's inclusion probabilities are what the draws do; the
labels file keeps every save and survives SIGKILL; labels are checked as the case loader checks them and
become annotated cases; reviewers' kappa; ``harness agree RUN --labels`` equals ``harness agree`` on the
same labels written as annotations, and its weighted figures undo the sample's lean toward disagreement."""
from __future__ import annotations

import collections
import json
import re
import signal
import subprocess
import sys

from harness.cases.load import case_to_json, load_cases
from harness.reports.review import answers as A
from harness.reports.review import reviewers as R
from harness.reports.review.sampling import draw
from harness.reports.review.store import LabelStore

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.synthetic import synthetic_run


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_each_answer_is_drawn_as_often_as_its_recorded_probability():
    ids = [f"c{i}" for i in range(12)]
    spread = {f"c{i}": (0.9 if i in (3, 7) else 0.05 * i) for i in range(12)}
    counts, recorded, draws = collections.Counter(), {}, 3000
    for seed in range(draws):
        picks = draw(ids, spread, 4, seed)
        assert len(picks) == 4 and len({p.case_id for p in picks}) == 4
        counts.update(p.case_id for p in picks)
        recorded.update({p.case_id: p.probability for p in picks})
    assert sum(recorded.values()) == pytest.approx(4.0)
    for cid in ids:
        assert counts[cid] / draws == pytest.approx(recorded[cid], abs=0.035), cid
    assert recorded["c3"] > 2 * recorded["c0"]          # leans toward disagreement ...
    assert recorded["c0"] >= 0.5 * 4 / 12 - 1e-9        # ... while every answer keeps its uniform share


def test_no_disagreement_known_means_a_uniform_sample():
    picks = draw([f"c{i}" for i in range(10)], {}, 5, seed=3)
    assert [p.probability for p in picks] == pytest.approx([0.5] * 5)
    assert [p.case_id for p in picks] == [p.case_id for p in draw([f"c{i}" for i in range(10)], {}, 5, seed=3)]


def _case() -> dict:
    return case_to_json(next(c for c in load_cases(CANONICAL) if c.id == "cookie-yield"))


def test_labels_are_checked_like_annotations_and_only_done_claims_become_one():
    case = _case()
    st = A.initial_state(case)
    assert len(st["claims"]) == 4 and all(c["label"] is None for c in st["claims"])
    ctx = case["contexts"][0]
    st["claims"][0].update(label="supported", evidence=[{"context_id": ctx["id"], "start": 0, "end": 5,
                                                         "quote": ctx["text"][:5]}])
    st["claims"][1]["label"] = "supported"          # no evidence yet: saved, but not done
    st["claims"][2]["label"] = "not_found"
    assert not A.answer_done(A.check(case, st))
    out = A.annotated_case(case, st)
    assert [c["label"] for c in out["annotation"]["claims"]] == ["supported", "not_found"]
    bad = json.loads(json.dumps(st))
    bad["claims"][0]["evidence"][0]["quote"] = "nope!"
    with pytest.raises(ValueError, match=r"claims\[0\]\.evidence\[0\]\.start/end: .* annotation says 'nope!'"):
        A.check(case, bad)
    bad = json.loads(json.dumps(st))
    bad["claims"][1]["start"] = bad["claims"][0]["start"]
    with pytest.raises(ValueError, match="overlap"):
        A.check(case, bad)
    bad = json.loads(json.dumps(st))
    bad["claims"][2]["evidence"] = bad["claims"][0]["evidence"]
    with pytest.raises(ValueError, match="'not_found' claim has no span stating it"):
        A.check(case, bad)


def test_every_save_is_kept_and_survives_sigkill(tmp_path):
    path = str(tmp_path / "l.sqlite")
    code = f"""
import os, signal
from harness.reports.review.store import LabelStore
from harness.reports.review.sampling import Pick
s = LabelStore({path!r})
s.write_sample([Pick("a", 1.0, 0.0)], {{"a": {{"id": "a"}}}}, {{}}, {{"seed": 1}})
s.save("alice", "a", {{"claims": [], "abstention": True, "answerable": False, "n": 1}})
s.save("alice", "a", {{"claims": [], "abstention": True, "answerable": False, "n": 2}})
os.kill(os.getpid(), signal.SIGKILL)
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    s = LabelStore(path)
    try:
        assert s.saves() == 2 and s.latest()["alice"]["a"]["n"] == 2 and s.meta() == {"seed": 1}
        assert re.fullmatch(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", s.latest()["alice"]["a"]["saved_at"])
    finally:
        s.close()


def test_cohen_and_the_disagreements_between_two_reviewers():
    answers = {"x": "One. Two. Three.", "y": "Four."}
    mk = lambda *labs: {"claims": [{"start": i * 5, "end": i * 5 + 4, "label": lab, "evidence": []}  # noqa: E731
                                   for i, lab in enumerate(labs)], "abstention": False, "answerable": True}
    latest = {"alice": {"x": mk("not_found", "inference", "not_found"), "y": mk("inference")},
              "bob": {"x": mk("not_found", "not_found", "not_found"), "y": mk("inference")}}
    k = R.compare(["x", "y"], answers, latest)
    # 4 claims, 3 agree; alice: nf 2, inf 2; bob: nf 3, inf 1 -> pe = (2*3 + 2*1) / 16 = 0.5, kappa = (0.75 - 0.5) / 0.5
    assert k.claims == 4 and k.claim_kappa == pytest.approx(0.5) and k.statistic == "Cohen"
    assert [d.case_id for d in k.disagreements] == ["x"]
    assert k.disagreements[0].what == ("claim [5, 9] 'Two.': alice inference, bob not_found",)


@pytest.fixture(scope="module")
def labelled_run(tmp_path_factory):
    """A synthetic run over the canonical cases, and a review of all of it whose labels are the cases' own
    annotations (saved through the labels file, as the app saves them)."""
    d = tmp_path_factory.mktemp("agree-labels")
    cases = load_cases(CANONICAL)
    synthetic_run(str(d / "run"), cases, run_id="agree-labels")
    labels = str(d / "all.sqlite")
    r = harness("review", str(d / "run"), "--labels", labels, "--sample", "100", "--kappa")
    assert r.returncode == 0, r.stderr
    s = LabelStore(labels)
    try:
        for c in cases:
            ann = c.annotation
            s.save("alice", c.id, {"claims": [{"start": k.answer_span[0], "end": k.answer_span[1], "label": k.label,
                                               "evidence": [{"context_id": e.context_id, "start": e.start, "end": e.end,
                                                             "quote": c.evidence_text(e)} for e in k.evidence]}
                                              for k in c.judged_claims()],
                                   "abstention": ann.abstention, "answerable": ann.answerable})
    finally:
        s.close()
    return str(d / "run"), labels


def test_agree_with_labels_equals_agree_on_the_same_annotations(labelled_run, tmp_path):
    run, labels = labelled_run
    mine = harness("agree", run, "--labels", labels, "--json")
    theirs = harness("agree", run, "--json")
    assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr + theirs.stderr
    a, b = json.loads(mine.stdout), json.loads(theirs.stdout)
    assert a["labels"]["labelled"] == 24 and a["labels"]["reviewers"] == ["alice"]
    for m, fig in b["metrics"].items():
        assert a["metrics"][m]["kappa"] == fig["kappa"] and a["metrics"][m]["n"] == fig["n"], m
        w = a["weighted"][m]   # every answer drawn with probability 1: weighting changes nothing
        assert w["accuracy"] == pytest.approx(fig["accuracy"]) and w["n"] == fig["n"], m
    text = harness("agree", run, "--labels", labels)
    assert "too few labelled answers to apply the rule (n = 24 < 50)" in text.stdout
    assert "weighted by 1 / inclusion probability" in text.stdout
    exported = str(tmp_path / "labelled.jsonl")
    r = harness("review", "--labels", labels, "--export", exported)
    assert r.returncode == 0 and "wrote 24 labelled answers" in r.stdout
    def comparable(c):   # the app asks whether an answer abstains, not where (abstention_span: the whole answer)
        d = case_to_json(c)
        d["annotation"]["abstention_span"] = None
        return d

    assert [comparable(c) for c in load_cases(exported)] == [comparable(c) for c in load_cases(CANONICAL)]


SEEDS = 150


def test_weighted_agreement_undoes_the_lean_toward_disagreement(labelled_run, tmp_path):
    """A sample leaning toward disagreement, labelled with the true annotations: the weighted estimate of
    each metric's raw agreement lands nearer the whole run's figure than the plain sample figure does, on
    average over many seeds (the sample design's whole point)."""
    from harness.reports.analysis import weighted_agreement as W
    from harness.reports.analysis.data import load_run
    from harness.reports.review.agree import with_labels

    run, labels = labelled_run
    full = load_run(run)
    truth_full, _, _ = with_labels(full, labels)
    whole = {w.metric: w.accuracy for w in W.compute(truth_full, {c: 1.0 for c in truth_full.case_ids}, 10)}
    from harness.reports.review.source import load

    src = load(run)
    err_w, err_plain = collections.Counter(), collections.Counter()
    for seed in range(SEEDS):
        picks = draw(src.order, src.disagreement, 8, seed, uniform_share=0.2)
        wts = {p.case_id: 1.0 / p.probability for p in picks}
        sub = {c: len(src.order) / len(wts) for c in wts}   # every answer alike: the plain sample mean
        for wa, pa in zip(W.compute(truth_full, wts, 10), W.compute(truth_full, sub, 10)):
            if whole[wa.metric] is None or wa.accuracy is None:
                continue
            err_w[wa.metric] += wa.accuracy - whole[wa.metric]
            err_plain[wa.metric] += pa.accuracy - whole[wa.metric]
    bias_w = {m: err_w[m] / SEEDS for m in err_plain}
    bias_plain = {m: err_plain[m] / SEEDS for m in err_plain}
    print({m: (round(bias_w[m], 3), round(bias_plain[m], 3)) for m in bias_plain})
    biased = [m for m in bias_plain if abs(bias_plain[m]) > 0.04]
    assert biased, "the sample should lean somewhere for this test to mean anything"
    for m in biased:
        assert abs(bias_w[m]) < abs(bias_plain[m]), (m, bias_w[m], bias_plain[m])
        assert abs(bias_w[m]) < 0.03, (m, bias_w[m])   # Horvitz-Thompson: unbiased, up to the seeds' noise


def test_bad_input_is_one_line_exit_2(tmp_path):
    r = harness("review", "--labels", str(tmp_path / "new.sqlite"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds no sample yet" in r.stderr
    r = harness("review", str(tmp_path / "nope"), "--labels", str(tmp_path / "n2.sqlite"))
    assert r.returncode == 2 and "no run" in r.stderr and "Traceback" not in r.stderr
    r = harness("agree", "nope", "--labels", str(tmp_path / "missing.sqlite"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
