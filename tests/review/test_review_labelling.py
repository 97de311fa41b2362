"""What a labelling team needs of ``harness review`` beyond the labels (issue 34 item 9), without a browser:
guidelines read from a file and kept in the labels file for every reviewer; a comment and a skip per answer, kept
per reviewer and answer, a skipped answer neither labelled nor rated (its count said) and unskippable; an undo is
one more appended save, so the history keeps both."""
from __future__ import annotations

import asyncio
import json

from harness.cases.load import case_to_json, load_cases
from harness.reports.review import answers as A
from harness.reports.review import reviewers as R
from harness.reports.review.store import LabelStore

import pytest

from tests.conftest import CANONICAL


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A labels file holding 3 canonical cases, drawn by the command (in-process), with guidelines."""
    from harness.console import main

    d = tmp_path_factory.mktemp("review-team")
    g = d / "rules.md"
    g.write_text("# Rules\n\nLabel **supported** only with a quote.\n<script>alert(1)</script>\n", encoding="utf-8")
    labels = str(d / "labels.sqlite")
    assert main(["review", CANONICAL, "--labels", labels, "--sample", "3", "--guidelines", str(g), "--kappa"]) == 0
    return {"labels": labels, "guidelines": str(g), "dir": d}


def _done_state(case: dict) -> dict:
    st = A.initial_state(case)
    for c in st["claims"]:
        c["label"] = "not_found"
    return st


def test_guidelines_are_kept_in_the_labels_file_and_replaced_by_a_later_call(sample, tmp_path, capsys):
    from harness.console import main

    s = LabelStore(sample["labels"], read_only=True)
    try:
        g = s.guidelines()
    finally:
        s.close()
    assert g["file"] == sample["guidelines"] and g["text"].startswith("# Rules\n") and "<script>" in g["text"]
    labels = str(tmp_path / "l.sqlite")
    with open(sample["labels"], "rb") as src, open(labels, "wb") as dst:
        dst.write(src.read())
    other = tmp_path / "v2.txt"
    other.write_text("Version 2.\n", encoding="utf-8")
    assert main(["review", "--labels", labels, "--guidelines", str(other), "--kappa"]) == 0
    s = LabelStore(labels, read_only=True)
    try:
        assert s.guidelines()["text"] == "Version 2.\n"
    finally:
        s.close()
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"line one\nline two \xff\n")
    capsys.readouterr()
    assert main(["review", "--labels", labels, "--guidelines", str(bad), "--kappa"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--guidelines {bad}, line 2: not UTF-8 text" in err, err


def test_comment_and_skip_are_checked_and_kept():
    case = case_to_json(next(c for c in load_cases(CANONICAL) if c.id == "cookie-yield"))
    st = _done_state(case)
    assert A.answer_done(A.check(case, st))
    kept = A.check(case, {**st, "comment": "passage 2 is out of date", "skipped": True})
    assert kept["comment"] == "passage 2 is out of date" and kept["skipped"] is True
    assert not A.answer_done(kept) and A.skipped(kept)            # skipped: not labelled, whatever the claims say
    assert "comment" not in A.check(case, {**st, "comment": ""}) and "skipped" not in A.check(case, {**st, "skipped": False})
    with pytest.raises(ValueError, match="field comment: expected text"):
        A.check(case, {**st, "comment": ["x"]})
    with pytest.raises(ValueError, match="field skipped: expected true or false"):
        A.check(case, {**st, "skipped": 1})


def test_a_skipped_answer_is_left_out_of_the_kappa_and_counted():
    answers = {"x": "One. Two.", "y": "Four."}
    mk = lambda *labs, **kw: {"claims": [{"start": i * 5, "end": i * 5 + 4, "label": lab, "evidence": []}  # noqa: E731
                                         for i, lab in enumerate(labs)], "abstention": False, "answerable": True, **kw}
    latest = {"alice": {"x": mk("not_found", "inference"), "y": mk("inference")},
              "bob": {"x": mk("not_found", "not_found"), "y": mk("not_found", skipped=True)}}
    k = R.compare(["x", "y"], answers, latest)
    assert k.answers == 1 and k.skipped == 1 and k.claims == 2 and [d.case_id for d in k.disagreements] == ["x"]
    assert "skipped by some reviewer, left out: 1" in R.text(k)
    latest["bob"]["y"] = mk("not_found")                           # unskipped: back in
    k = R.compare(["x", "y"], answers, latest)
    assert k.answers == 2 and k.skipped == 0 and [d.case_id for d in k.disagreements] == ["x", "y"]


def test_the_app_serves_guidelines_skip_comment_and_undo_as_appends(sample, tmp_path):
    from harness.reports.review.server import make_app

    from aiohttp.test_utils import TestClient, TestServer

    labels = str(tmp_path / "l.sqlite")
    with open(sample["labels"], "rb") as src, open(labels, "wb") as dst:
        dst.write(src.read())
    store = LabelStore(labels)
    case = store.case_json(store.picks()[0].case_id)
    done = _done_state(case)

    async def go():
        async with TestClient(TestServer(make_app(store, "alice"))) as c:
            put = lambda body, who="alice": c.put(f"/api/answer/0?reviewer={who}", data=json.dumps(body),  # noqa: E731
                                                  headers={"Content-Type": "application/json"})
            s = await (await c.get("/api/session")).json()
            assert s["guidelines"]["text"].startswith("# Rules") and "guidelines" not in s["meta"]
            assert (s["done"], s["skipped"]) == (0, 0)
            r = await (await put(done)).json()
            assert (r["progress"], r["skipped"]) == (1, 0)
            r = await (await put({**done, "skipped": True, "comment": "unclear question"})).json()
            assert (r["progress"], r["skipped"]) == (0, 1)
            s = await (await c.get("/api/session")).json()
            assert s["first_open"] == 1                            # a skipped answer is not where work resumes
            a = await (await c.get("/api/answer/0")).json()
            assert a["state"]["skipped"] is True and a["state"]["comment"] == "unclear question"
            b = await (await c.get("/api/answer/0?reviewer=bob")).json()
            assert "skipped" not in b["state"] and "comment" not in b["state"]   # per reviewer
            r = await (await put(done)).json()                     # undo in the page: the earlier state, saved again
            assert (r["progress"], r["skipped"]) == (1, 0)

    try:
        asyncio.run(go())
        assert store.saves() == 3                                   # every change an append: nothing lost
        assert A.answer_done(store.latest("alice")["alice"][case["id"]])
    finally:
        store.close()


def test_assign_splits_the_sample_with_overlap_and_each_reviewer_sees_their_progress(sample, tmp_path, capsys):
    from harness.console import main
    from harness.reports.review.assign import split
    from harness.reports.review.server import make_app

    from aiohttp.test_utils import TestClient, TestServer

    parts = split(9, ["alice", "bob", "carol"], overlap=3)
    assert [0, 1, 2] == parts["alice"][:3] == parts["bob"][:3] == parts["carol"][:3]
    rest = sorted(p for ps in parts.values() for p in ps[3:])
    assert rest == list(range(3, 9))                               # every answer past the overlap: exactly one reviewer
    labels = str(tmp_path / "l.sqlite")
    with open(sample["labels"], "rb") as src, open(labels, "wb") as dst:
        dst.write(src.read())
    assert main(["review", "--labels", labels, "--assign", "alice,bob", "--overlap", "1", "--kappa"]) == 0
    assert "review: assigned alice 2, bob 2 answers (the first 1 to everyone)" in capsys.readouterr().out
    assert main(["review", "--labels", labels, "--assign", "alice,alice", "--kappa"]) == 2
    assert capsys.readouterr().err == "harness: --assign: 'alice' is named twice\n"
    store = LabelStore(labels)
    picks = store.picks()

    async def go():
        async with TestClient(TestServer(make_app(store, "alice"))) as c:
            s = await (await c.get("/api/session?reviewer=bob")).json()
            assert s["assigned"] == [0, 2] and s["first_open"] == 0
            st = _done_state(store.case_json(picks[2].case_id))
            r = await (await c.put("/api/answer/2?reviewer=bob", data=json.dumps(st),
                                   headers={"Content-Type": "application/json"})).json()
            assert r["progress"] == 1
            s = await (await c.get("/api/session?reviewer=bob")).json()
            assert s["first_open"] == 0 and s["done"] == 1
            s = await (await c.get("/api/session?reviewer=alice")).json()
            assert s["assigned"] == [0, 1] and s["done"] == 0
            assert s["team"] == [{"reviewer": "alice", "assigned": 2, "done": 0, "skipped": 0},
                                 {"reviewer": "bob", "assigned": 2, "done": 1, "skipped": 0}]
            s = await (await c.get("/api/session?reviewer=dave")).json()
            assert s["assigned"] is None                          # not named: the whole sample

    try:
        asyncio.run(go())
    finally:
        store.close()
