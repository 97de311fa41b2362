"""``harness review`` in a real browser (Debian's Chromium through Playwright): a reviewer labels claims
with the mouse and the keyboard and selects evidence by dragging over a passage; the server is killed
with SIGKILL and started again, and every label is still there; a second reviewer's labels give the
inter-annotator kappa computed here by hand; the app's own time per answer (page load plus save round
trips, no person) is measured and written to tests/browser/artifacts/review_seconds_per_answer.txt.

Screenshots go to tests/browser/artifacts/review_*.png.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.review_browser import (  # noqa: F401
    ARTIFACTS,
    ReviewServer,
    browser,
    click_in_answer,
    drag_select,
    goto_answer,
    settled,
    shot,
)
from tests.helpers.synthetic import synthetic_run

LABEL_KEYS = {"supported": "1", "inference": "2", "not_found": "3", "contradicted": "4"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run of every metric's definition over the canonical cases (synthetic cells: the app only reads them)."""
    d = tmp_path_factory.mktemp("review-run")
    synthetic_run(str(d / "run"), load_cases(CANONICAL), run_id="review-run")
    return str(d / "run")


def _latest(labels: str, reviewer: str) -> dict:
    from harness.reports.review.store import LabelStore

    s = LabelStore(labels)
    try:
        return s.latest(reviewer).get(reviewer, {})
    finally:
        s.close()


def _first_with_claims(page, total: int, k: int) -> int:
    for pos in range(total):
        goto_answer(page, pos) if pos else None
        if page.evaluate("window.reviewApp.st.claims.length") >= k:
            return pos
    raise AssertionError(f"no answer of the sample has {k} claims")


def test_label_with_mouse_and_keyboard_then_kill_and_restart(browser, run_dir, tmp_path):  # noqa: F811 - fixture
    labels = str(tmp_path / "labels.sqlite")
    server = ReviewServer(run_dir, "--labels", labels, "--sample", "6", "--seed", "2", "--reviewer", "alice").start()
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server.url)
        settled(page)
        assert page.inner_text("#position").startswith("answer 1 of 6")
        assert page.inner_text("#progress") == "0 of 6 labelled"
        pos = _first_with_claims(page, 6, 3)
        case = page.evaluate("window.reviewApp.data.case")
        ctx = case["contexts"][0]
        end = ctx["text"].find(" ", 12)
        end = end if end > 0 else len(ctx["text"])

        # claim 1: the label by mouse, then its evidence by dragging over the first passage
        page.click("#claims li[data-i='0'] button[data-label='supported']")
        drag_select(page, ctx["id"], 0, end)
        # the app reads the selection in a task after mouseup, and only then queues the save: wait for the
        # evidence itself (waiting for "no save pending" alone can pass before the save is queued)
        page.wait_for_function("window.reviewApp.st.claims[0].evidence.length === 1", timeout=30_000)
        settled(page)
        assert page.locator("#claims li[data-i='0'] .chip").count() == 1
        # claim 2: chosen by mouse, labelled by keyboard; claim 3: the app moves on by itself, keyboard again
        page.click("#claims li[data-i='1'] .ctext")
        page.keyboard.press("3")
        page.keyboard.press("c")
        settled(page)
        # the metrics' verdicts are hidden until asked for
        assert page.locator("#claims li[data-i='0'] .claim-verdicts").is_hidden()
        shot(page, "review_labelled.png")
        page.keyboard.press("v")
        assert page.locator("#claims li[data-i='0'] .claim-verdicts").is_visible()
        shot(page, "review_verdicts_shown.png")
        page.keyboard.press("v")
        # split the fourth claim at a word boundary with a click and x, then merge it back with m
        st = page.evaluate("window.reviewApp.st")
        c4 = st["claims"][3]
        cut = case["answer"].index(" ", c4["start"] + 2) + 1
        click_in_answer(page, cut)
        page.keyboard.press("x")
        settled(page)
        parts = page.evaluate("window.reviewApp.st.claims")[3:5]
        assert [(p["start"], p["end"]) for p in parts] == [(c4["start"], cut - 1), (cut, c4["end"])]
        assert page.locator("#claims li").count() == len(st["claims"]) + 1
        page.click("#claims li[data-i='3'] .ctext")
        page.keyboard.press("m")
        settled(page)
        assert page.evaluate("window.reviewApp.st.claims") == st["claims"]
        saved = _latest(labels, "alice")[case["id"]]
    finally:
        server.kill()

    assert saved["saved_at"].startswith("20")
    want = [("supported", [{"context_id": ctx["id"], "start": 0, "end": end, "quote": ctx["text"][:end]}]),
            ("not_found", []), ("contradicted", [])]
    assert [(c["label"], c["evidence"]) for c in saved["claims"][:3]] == want

    again = ReviewServer("--labels", labels, "--reviewer", "alice").start()   # no SOURCE: the sample is stored
    try:
        page.goto(again.url + f"#{pos + 1}")
        settled(page)
        st = page.evaluate("window.reviewApp.st")
        assert [(c["label"], c["evidence"]) for c in st["claims"][:3]] == want
        assert "on" in page.get_attribute("#claims li[data-i='0'] button[data-label='supported']", "class")
        assert "on" in page.get_attribute("#claims li[data-i='1'] button[data-label='not_found']", "class")
        assert "on" in page.get_attribute("#claims li[data-i='2'] button[data-label='contradicted']", "class")
        assert page.locator("#passages mark").first.inner_text() == ctx["text"][:end]
        shot(page, "review_after_restart.png")
    finally:
        again.kill()
        page.close()


def _label_all(page, total: int, pattern) -> tuple[list[str], list[float]]:
    """Label every claim of every answer by keyboard only (``pattern(pos, k)`` gives the label; labels
    that need no evidence); return the labels in order and the app's seconds per answer."""
    labels, per_answer = [], []
    for pos in range(total):
        if pos:
            page.keyboard.press("Enter")
            page.wait_for_function(f"window.reviewApp.ready && window.reviewApp.pos === {pos}", timeout=30_000)
        settled(page)
        n = page.evaluate("window.reviewApp.st.claims.length")
        before = page.evaluate("[window.reviewApp.loadMs.length, window.reviewApp.saveMs.length]")
        for k in range(n):
            lab = pattern(pos, k)
            page.keyboard.press(LABEL_KEYS[lab])
            labels.append(lab)
        settled(page)
        load_ms, save_ms = page.evaluate(
            f"[window.reviewApp.loadMs.slice({before[0] - 1}).reduce((a, b) => a + b, 0),"
            f" window.reviewApp.saveMs.slice({before[1]}).reduce((a, b) => a + b, 0)]")
        per_answer.append((load_ms + save_ms) / 1000)
    return labels, per_answer


def _cohen(a: list[str], b: list[str]) -> float:
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pe = sum(a.count(k) * b.count(k) for k in set(a) | set(b)) / (n * n)
    return (po - pe) / (1 - pe)


def test_two_reviewers_give_the_expected_kappa(browser, run_dir, tmp_path):  # noqa: F811 - fixture
    labels = str(tmp_path / "two.sqlite")
    alice = ["not_found", "inference", "contradicted"]
    server = ReviewServer(run_dir, "--labels", labels, "--sample", "5", "--seed", "0", "--reviewer", "alice").start()
    try:
        pa = browser.new_page(viewport={"width": 1400, "height": 900})
        pa.goto(server.url + "#1")
        settled(pa)
        a_labels, seconds = _label_all(pa, 5, lambda pos, k: alice[(pos + k) % 3])
        assert pa.inner_text("#progress") == "5 of 5 labelled"
        pb = browser.new_page(viewport={"width": 1400, "height": 900})
        pb.goto(server.url + "?reviewer=bob#1")
        settled(pb)
        b_labels, _ = _label_all(pb, 5, lambda pos, k: alice[(pos + k) % 3] if (pos + 2 * k) % 3 else "not_found")
        pb.reload()
        settled(pb)
        pb.click("#disagreements-button")
        pb.wait_for_selector("#disagreement-list li")
        shot(pb, "review_disagreements.png")
        kappa_text = pb.inner_text("#kappa")
    finally:
        server.kill()
    expected = _cohen(a_labels, b_labels)
    assert a_labels != b_labels and 0 < len(a_labels)
    assert f"Cohen's kappa on claims {expected:.2f}" in kappa_text
    r = subprocess.run([sys.executable, "-m", "harness", "review", "--labels", labels, "--kappa"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"kappa {expected:.3f}" in r.stdout
    differing = sum(x != y for x, y in zip(a_labels, b_labels))
    assert r.stdout.count(", bob ") == differing   # one line per claim to adjudicate

    os.makedirs(ARTIFACTS, exist_ok=True)
    mean = sum(seconds) / len(seconds)
    with open(os.path.join(ARTIFACTS, "review_seconds_per_answer.txt"), "w") as fh:
        json.dump({"answers": len(seconds), "claims": len(a_labels), "seconds_per_answer_mean": round(mean, 4),
                   "seconds_per_answer_max": round(max(seconds), 4),
                   "what": "page load of the answer + every save round trip, no person"}, fh, indent=2)
    print(f"review app: {mean:.3f} s per answer (load + saves), {len(a_labels)} claims over {len(seconds)} answers")
