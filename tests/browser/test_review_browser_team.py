"""``harness review`` for a labelling team, in a real browser (Debian's Chromium through Playwright): the guidelines
from ``--guidelines`` are shown beside the answer as text (markup in them is never run), collapsible; a label is
undone with ``u``; a comment and a skip are kept per answer; the passage pane stays in view while the page scrolls
down the claims; answers assigned with ``--assign`` are the reviewer's own, with the team's progress; after SIGKILL and a restart the comment, the skip and every save (the undo too) are there.

Screenshots: tests/browser/artifacts/review_team_guidelines.png, review_team.png (scrolled down)."""
from __future__ import annotations

from tests.conftest import CANONICAL
from tests.helpers.review_browser import ReviewServer, browser, settled, shot  # noqa: F401

RULES = "# Labelling rules\n\n1. **supported** needs a quote.\n2. Vague claims: inference.\n<img src=x onerror=\"window.pwned=1\">\n"


def _store(labels: str):
    from harness.reports.review.store import LabelStore

    return LabelStore(labels, read_only=True)


def test_guidelines_undo_comment_skip_and_the_pane_beside_the_claims(browser, tmp_path):  # noqa: F811 - fixture
    rules = tmp_path / "rules.md"
    rules.write_text(RULES, encoding="utf-8")
    labels = str(tmp_path / "team.sqlite")
    server = ReviewServer(CANONICAL, "--labels", labels, "--sample", "3", "--seed", "1", "--reviewer", "alice",
                          "--guidelines", str(rules), "--assign", "alice,bob", "--overlap", "1").start()
    page = browser.new_page(viewport={"width": 1280, "height": 560})
    try:
        page.goto(server.url + "#1")
        settled(page)
        # guidelines: shown as text beside the answer, markup inert, collapsible
        assert page.locator("#guidelines").is_visible()
        assert page.inner_text("#guidelines-text").strip() == RULES.strip()
        assert page.locator("#guidelines-text img").count() == 0 and page.evaluate("window.pwned") is None
        page.click("#guidelines summary")
        page.wait_for_function("!document.getElementById('guidelines').open")
        assert not page.locator("#guidelines-text").is_visible()
        page.click("#guidelines summary")
        page.wait_for_function("document.getElementById('guidelines').open")
        shot(page, "review_team_guidelines.png")

        # a label, then undo: the claim is unlabelled again, and the undo is saved
        page.keyboard.press("3")
        settled(page)
        assert page.evaluate("window.reviewApp.st.claims[0].label") == "not_found"
        page.keyboard.press("u")
        settled(page)
        assert page.evaluate("window.reviewApp.st.claims[0].label") is None
        assert page.locator("#undo").is_disabled()

        # a comment (typed keys are text, not shortcuts) and a skip
        page.click("#comment")
        page.keyboard.type("unclear 3 s")
        page.keyboard.press("Escape")
        settled(page)
        assert page.evaluate("window.reviewApp.st.comment") == "unclear 3 s"
        assert page.evaluate("window.reviewApp.st.claims[0].label") is None
        page.keyboard.press("Shift+S")
        settled(page)
        page.wait_for_function("document.getElementById('skipped-count').textContent === '(1 skipped)'")
        assert page.inner_text("#progress") == "0 of 2 assigned labelled"   # alice: answers 1 and 2 of 3

        # the passage pane stays in view when the page scrolls down to the last claims
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_function("window.scrollY > 0")
        top, bottom = page.evaluate("(() => { const r = document.getElementById('right').getBoundingClientRect();"
                                    " return [r.top, r.bottom]; })()")
        bar = page.evaluate("document.getElementById('bar').getBoundingClientRect().bottom")
        assert bar <= top < 560 and bottom > 100, (bar, top, bottom)   # below the bar, in view
        shot(page, "review_team.png")
    finally:
        server.kill()

    s = _store(labels)
    try:
        case_id = s.picks()[0].case_id
        st = s.latest("alice")["alice"][case_id]
        assert st["skipped"] is True and st["comment"] == "unclear 3 s"
        assert s.saves() == 4 and s.guidelines()["text"] == RULES   # label, undo, comment, skip: four appends
    finally:
        s.close()

    again = ReviewServer("--labels", labels, "--reviewer", "alice").start()
    try:
        page.goto(again.url + "#1")
        settled(page)
        assert page.is_checked("#skip") and page.input_value("#comment") == "unclear 3 s"
        assert page.inner_text("#guidelines-text").strip() == RULES.strip()
        assert page.inner_text("#team") == "team: alice 0/2 (1 skipped) \u00b7 bob 0/2"
        page.click("#skip")                                          # unskip: counted again once labelled
        settled(page)
        page.wait_for_function("document.getElementById('skipped-count').textContent === ''")
        page.click("#next")                                          # alice's next answer is #2; bob's #3 is not hers
        page.wait_for_function("window.reviewApp.ready && window.reviewApp.pos === 1")
        page.click("#next")
        settled(page)
        assert page.evaluate("window.reviewApp.pos") == 1
    finally:
        again.kill()
        page.close()
