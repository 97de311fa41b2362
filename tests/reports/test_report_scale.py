"""The report of a synthetic 2,000-case x 10-metric run (``tests.helpers.synthetic.scaled_run``: written through the
store API, no metric runs) stays small: no table in its HTML is longer than the score matrix's cap, the long
lists are counted rather than listed, the case browser carries every case's scores, and in Chromium the page
stays under 20,000 px tall at a desktop and at a phone width. Build time at scale is measured in
bench/bench_report.py, never here."""
from __future__ import annotations

import os
import re

import pytest

from tests.helpers.synthetic import TEN_METRICS, scaled_run

N = 2000
MAX_PX = 20_000


def _built(tmp_path_factory, name: str, n: int):
    """A synthetic run of ``n`` cases x 10 metrics, its report built: (the build, its HTML)."""
    from harness.reports.build import build

    d = tmp_path_factory.mktemp(name)
    scaled_run(str(d / "run"), n, run_id=name)
    b = build(str(d / "run"))
    return b, open(b.html_path, encoding="utf-8").read()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _built(tmp_path_factory, "scale", N)


def test_no_table_is_longer_than_a_page(built):
    from harness.reports.render.html import MATRIX_ROWS

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

    from harness.reports.model.case_index import DETAIL_CASES

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


def _sections(page: str) -> dict[str, str]:
    """section id -> its HTML (scripts removed), for the sections the page has."""
    html = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S | re.I)
    out = {}
    for m in re.finditer(r'<section id="([^"]+)"', html):
        out[m.group(1)] = html[m.start():html.find("</section>", m.start())]
    return out


def _shape(section: str) -> dict[str, int]:
    """What a section lays out: table rows, list items, cases shown in full."""
    return {"rows": section.count("<tr"), "items": section.count("<li"), "cases in full": section.count("<h4")}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return _built(tmp_path_factory, "scale-small", N_SMALL)


N_SMALL = 400
"""Past the matrix's cap and the divergence section's MANY: every long section already pages at this size."""


def test_every_section_lays_out_the_same_at_five_times_the_cases(built, small):
    """Paging holds section by section: a 2,000-case run lays out as many rows, list items and cases in full in
    each section as a 400-case run of the same cases (a section that lists every case, divergence or note
    grows with the run and fails here)."""
    big, little = _sections(built[1]), _sections(small[1])
    assert set(big) == set(little) and {"matrix", "divergences", "metrics", "facts", "agreement"} <= set(big)
    for key in big:
        assert _shape(big[key]) == _shape(little[key]), key
    assert len(built[0].report.divergences) > 4 * len(small[0].report.divergences) > 200


def test_the_divergence_section_links_a_bounded_number_of_cases(built):
    from harness.reports.render.html_divergence import FULL_WHEN_MANY, LINKS_PER_GROUP

    b, page = built
    sec = _sections(page)["divergences"]
    groups = sec.count('<h3 class="reason">')
    assert 0 < sec.count("<h4") <= FULL_WHEN_MANY
    assert sec.count('href="#c-') <= groups * LINKS_PER_GROUP < len(b.report.divergences)
    assert "tick \"divergent only\" and sort by spread" in sec   # the rest are counted, not listed


def test_a_long_block_table_or_list_is_cut_and_counted():
    """Any metric's own section (the cascade's residual errors, say) goes through the same layout: at 5,000 rows
    it shows the first TABLE_ROWS and the count; the Markdown keeps them all."""
    from harness.reports.model.blocks import Section, Table
    from harness.reports.render.blocks import TABLE_ROWS, html, markdown

    rows = [[f"case-{i}", "a sentence", "0.9"] for i in range(5000)]
    blk = Section("cascade", "Cascade", [Table(["case", "text", "similarity"], rows), [f"item {i}" for i in range(5000)]])
    out = html(blk)
    assert out.count("<tr>") == TABLE_ROWS + 1 and f"The first {TABLE_ROWS:,} of 5,000 rows" in out
    assert out.count("<li") == TABLE_ROWS + 1 and "and 4,900 more" in out
    assert "\n".join(markdown(blk)).count("| case-") == 5000


from tests.helpers.review_browser import browser  # noqa: E402, F401 - fixture
