"""The report of a synthetic 2,000-case x 10-metric run (``tests.synthetic.scaled_run``: written through the
store API, no metric runs) stays small: no table in its HTML is longer than the score matrix's cap, the long
lists are counted rather than listed, the case browser carries every case's scores, and in Chromium the page
stays under 20,000 px tall at a desktop and at a phone width. Build time at scale is measured in
bench/bench_report.py, never here."""
from __future__ import annotations

import os
import re

import pytest

from tests.synthetic import TEN_METRICS, scaled_run

N = 2000
MAX_PX = 20_000


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from reports.build import build

    d = tmp_path_factory.mktemp("scale")
    scaled_run(str(d / "run"), N, run_id="scale")
    b = build(str(d / "run"))
    return b, open(b.html_path, encoding="utf-8").read()


def test_no_table_is_longer_than_a_page(built):
    from reports.render.html import MATRIX_ROWS

    b, page = built
    assert len(b.report.data.case_ids) == N and len(b.report.data.metrics) == len(TEN_METRICS)
    html = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S | re.I)
    tables = re.findall(r"<table.*?</table>", html, flags=re.S)
    lengths = [t.count("<tr") for t in tables]
    assert tables and max(lengths) <= MATRIX_ROWS + 1   # + its heading row
    assert f"The first {MATRIX_ROWS:,} of {N:,} cases" in html   # the matrix says what it left to the browser
    assert max(len(ul) for ul in re.findall(r"<ul.*?</ul>", html, flags=re.S)) < 40_000   # notes are counted
    assert len(b.report.divergences) > 200   # the run does have long lists to cap


def test_the_case_browser_keeps_every_case(built):
    import json

    from reports.model.case_index import DETAIL_CASES

    b, page = built
    data = json.loads(re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', page, re.S).group(1))
    assert [c["id"] for c in data["cases"]] == b.report.data.case_ids
    assert all(len(c["scores"]) == len(TEN_METRICS) for c in data["cases"])
    detailed = [c for c in data["cases"] if c.get("detail", True)]
    assert len(detailed) == min(N, DETAIL_CASES) and all(c["question"] for c in detailed)


@pytest.mark.parametrize("width,height", [(1280, 900), (390, 844)])
def test_page_height_stays_bounded(built, browser, width, height):  # noqa: F811 - the fixture
    b, _ = built
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto("file://" + os.path.abspath(b.html_path))
    page.wait_for_selector("#cb-body tr.cb-row")
    px = page.evaluate("document.documentElement.scrollHeight")
    page.close()
    assert px < MAX_PX, px


from tests.review_browser import browser  # noqa: E402, F401 - fixture
