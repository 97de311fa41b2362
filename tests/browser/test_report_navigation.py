"""The report's case browser in a real browser (Debian's Chromium through Playwright): a run of 120 cases
(more than one page of the browser); search, filter by a metric's score range, sort by spread, follow a
score matrix cell to its case's claim-by-claim view, follow a metric's name to its card. The report is
opened from disk (file://), as one self-contained file. Screenshot: tests/browser/artifacts/report_cases.png."""
from __future__ import annotations

import json
import os

from harness.cases.load import case_to_json, load_cases

import pytest

from tests.conftest import CANONICAL
from tests.helpers.review_browser import browser, shot  # noqa: F401 - fixture
from tests.helpers.synthetic import synthetic_run

N = 120


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """(index.html path, the run's data) for a synthetic run of N cases (the canonical ones, repeated)."""
    from harness.reports.build import build

    d = tmp_path_factory.mktemp("nav")
    base = [case_to_json(c) for c in load_cases(CANONICAL)]
    path = str(d / "many.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({**base[i % len(base)], "id": f"{base[i % len(base)]['id']}-{i:03d}"}) + "\n")
    synthetic_run(str(d / "run"), load_cases(path), cases_path=path, run_id="nav")
    built = build(str(d / "run"))
    return built.html_path, built.report


def _shown(page) -> list[str]:
    return page.evaluate("window.caseBrowser.shown()")


def _visible_ids(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#cb-body tr.cb-row')].map(r => r.id.slice(2))")


def test_filter_sort_search_and_follow_a_matrix_link(browser, report):  # noqa: F811 - the fixture
    html, rep = report
    data = rep.data
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto("file://" + os.path.abspath(html))
    page.wait_for_selector("#cb-body tr.cb-row")
    assert page.inner_text("#cb-count") == f"{N} of {N} cases \u00b7 page 1 of 3"
    assert len(_visible_ids(page)) == 50

    page.fill("#cb-q", "cookie")
    want = [c for c in data.case_ids if "cookie" in (c + data.cases[c].question + data.cases[c].answer
                                                     + " ".join(data.cases[c].tags)).lower()]
    assert sorted(_shown(page)) == sorted(want) and 0 < len(want) < N
    page.fill("#cb-q", "")

    metric = data.metrics.index("inhouse.span")
    page.select_option("#cb-metric", str(metric))
    page.fill("#cb-max", "0.5")
    low = [c for c in data.case_ids if rep.cells[(c, "inhouse.span")].status == "scored"
           and rep.cells[(c, "inhouse.span")].score <= 0.5]
    assert sorted(_shown(page)) == sorted(low) and 0 < len(low) < N
    page.select_option("#cb-metric", "")
    page.fill("#cb-max", "")

    page.click("#cb-table th[data-sort='spread']")
    spreads = {c["id"]: c["spread"] for c in page.evaluate("JSON.parse(document.getElementById('cb-data').textContent).cases")}
    order = [spreads[c] for c in _shown(page)]
    known = [s for s in order if s is not None]
    assert known == sorted(known, reverse=True) and order[:len(known)] == known   # none-spread cases last
    shot(page, "report_cases.png")

    target = data.case_ids[101]   # with the table sorted by spread, a case of spread 0 on the last page
    page.click(".matrix-box tbody tr:nth-child(102) td:nth-child(2) a")
    page.wait_for_function("id => location.hash === '#c-' + encodeURIComponent(id)", arg=target)
    # the page follows the hash in its hashchange handler, which runs after the hash is set: wait for it
    page.wait_for_function("() => document.getElementById('cb-count').innerText.endsWith('page 3 of 3')",
                           timeout=10_000)
    row = page.locator(f"#cb-body tr.cb-row[id='c-{target}']")
    assert row.is_visible() and row.locator("button").get_attribute("aria-expanded") == "true"
    detail = page.locator(f"#cb-body tr.cb-row[id='c-{target}'] + tr.cb-detail")
    assert detail.locator("table.align").count() == 1
    assert data.cases[target].answer[:30] in detail.inner_text()
    shot(page, "report_followed_matrix_link.png")

    page.click(".matrix-box thead th:nth-child(2) a")
    card = page.locator(f"details[id='card-{data.metrics[0]}']")
    page.wait_for_function("id => document.getElementById('card-' + id).open", arg=data.metrics[0], timeout=10_000)
    assert card.get_attribute("open") is not None and card.is_visible()
    page.close()
