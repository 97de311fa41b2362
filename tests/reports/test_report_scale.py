"""The report of a synthetic 2,000-case x 10-metric run (``tests.helpers.synthetic.scaled_run``: written through the
store API, no metric runs) stays small: no table in its HTML is longer than the score matrix's cap, the long
lists are counted rather than listed, the case browser carries every case's scores, and in Chromium the page
stays under 20,000 px tall at a desktop and at a phone width; its Markdown lays out as much as a 400-case run's
and every case's cells go to cases.csv. Past the case browser's caps (lowered here, so a
600-case run reaches them) the page carries a bounded number of cases, compactly, which read as cases in Chromium.
Build time at scale is measured in bench/bench_report.py, never here."""
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


def test_only_the_divergent_cases_shown_in_full_get_a_full_view(built):
    """Past ALL_IN_FULL divergent cases the model builds the claim-by-claim view of the first few of each reason
    only; the others are links (id, spread, anchor), in the same order."""
    from harness.reports.model.divergence_view import ALL_IN_FULL, IN_FULL_PER_REASON, CaseLink, CaseView, GroupView

    b = built[0]
    assert len(b.report.divergences) > ALL_IN_FULL
    groups = [g for g in b.report.sections["divergences"].parts if isinstance(g, GroupView)]
    assert sum(g.count for g in groups) == len(b.report.divergences)
    for g, want in zip(groups, b.report.glance):
        k = min(IN_FULL_PER_REASON, g.count)
        assert all(isinstance(cv, CaseView) for cv in g.cases[:k])
        assert all(isinstance(cv, CaseLink) for cv in g.cases[k:])
        assert [cv.case_id for cv in g.cases] == [dv.case_id for dv in want.divergences]


def test_a_long_block_table_or_list_is_cut_and_counted():
    """Any metric's own section (the cascade's residual errors, say) goes through the same layout: at 5,000 rows
    it shows the first TABLE_ROWS and the count; the Markdown the first MD_ROWS."""
    from harness.reports.model.blocks import Section, Table
    from harness.reports.render.blocks import MD_ROWS, TABLE_ROWS, html, markdown

    rows = [[f"case-{i}", "a sentence", "0.9"] for i in range(5000)]
    blk = Section("cascade", "Cascade", [Table(["case", "text", "similarity"], rows), [f"item {i}" for i in range(5000)]])
    out = html(blk)
    assert out.count("<tr>") == TABLE_ROWS + 1 and f"The first {TABLE_ROWS:,} of 5,000 rows" in out
    assert out.count("<li") == TABLE_ROWS + 1 and "and 4,900 more" in out
    assert "(report.md) lists the first 500" in out
    md = "\n".join(markdown(blk))
    assert md.count("| case-") == MD_ROWS and f"The first {MD_ROWS:,} of 5,000 rows" in md
    assert md.count("- item ") == MD_ROWS and "and 4,500 more" in md


def _md_shape(md: str) -> dict[str, tuple[int, int, int]]:
    """Markdown section title (its first words) -> (table rows, list items, cases in full)."""
    out = {}
    for part in re.split(r"^## ", md, flags=re.M)[1:]:
        lines = part.splitlines()
        key = " ".join(lines[0].split()[:2])
        out[key] = (sum(l.startswith("| ") for l in lines), sum(l.startswith("- ") for l in lines),
                    sum(l.startswith("#### ") for l in lines))
    return out


def test_the_markdown_lays_out_the_same_at_five_times_the_cases(built, small):
    """report.md is bounded like the page: the 2,000-case run's lays out as many table rows, list items and cases
    in full in each section as the 400-case run's, and names cases.csv, which holds every case."""
    import csv

    big, little = (open(b.md_path, encoding="utf-8").read() for b in (built[0], small[0]))
    assert _md_shape(big) == _md_shape(little)
    assert "[cases.csv](cases.csv)" in big and "more (every case's reason: cases.csv)" in big
    with open(os.path.join(os.path.dirname(built[0].md_path), "cases.csv"), encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    b = built[0].report
    assert [r[0] for r in rows[1:]] == b.data.case_ids and rows[0][3:] == b.data.metrics
    divergent = {dv.case_id: dv for dv in b.divergences}
    assert {r[0] for r in rows[1:] if r[2]} == set(divergent)
    first = rows[1]
    assert first[3:] == [b.cells[(first[0], m)].label + ("" if b.cells[(first[0], m)].status == "scored"
                                                         else f" ({b.cells[(first[0], m)].status})")
                         for m in b.data.metrics]


N_CAPPED = 600


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """A 600-case run built with the case browser's caps lowered: texts for 100 cases, 300 cases carried (and 5
    links under each divergence reason)."""
    from harness.reports.model import case_index
    from harness.reports.render import html_divergence

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(case_index, "DETAIL_CASES", 100)
        mp.setattr(case_index, "CARRIED_CASES", 300)
        mp.setattr(html_divergence, "LINKS_PER_GROUP", 5)   # the links under each reason, and what carry() keeps
        mp.setattr(case_index, "LINKED_PER_REASON", 6)
        return _built(tmp_path_factory, "scale-capped", N_CAPPED)


def _browser_data(page: str) -> dict:
    import json

    return json.loads(re.search(r'<script type="application/json" id="cb-data">(.*?)</script>', page, re.S).group(1))


def test_past_its_caps_the_page_carries_a_bounded_number_of_cases(capped):
    b, page = capped
    data = _browser_data(page)
    more = data["more"]
    assert len(data["cases"]) == 100 and all(c["question"] for c in data["cases"])   # with their texts
    assert len(more["ids"]) == 200 and data["left"] == N_CAPPED - 300
    assert all(len(more[k]) == 200 for k in ("pos", "tags", "spread", "divergent", "cells"))
    carried = {c["id"] for c in data["cases"]} | set(more["ids"])
    linked = {m.group(1) for m in re.finditer(r'href="#c-([^"]+)"', page)}
    assert linked and linked <= carried   # every case another section links is in the page
    assert set(b.report.data.case_ids[:200]) <= carried
    assert "This page carries 300 of the run&#x27;s 600 cases" in page or "This page carries 300 of the run's 600 cases" in page
    # each carried case's cells, as the uncapped build would give them
    at = b.report.data.case_ids.index(more["ids"][7])
    want = [b.report.cells[(more["ids"][7], m)] for m in b.report.data.metrics]
    got = [more["kinds"][k] for k in more["cells"][7]]
    assert more["pos"][7] == at and [(g["v"], g["label"], g["status"]) for g in got] == \
        [(c.score, c.label, c.status) for c in want]


def test_the_compact_cases_read_as_cases_in_the_browser(capped, browser):  # noqa: F811 - the fixture
    b, page_html = capped
    data = _browser_data(page_html)
    one = data["more"]["ids"][0]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto("file://" + os.path.abspath(b.html_path))
    page.wait_for_selector("#cb-body tr.cb-row")
    shown = page.evaluate("window.caseBrowser.shown()")
    assert len(shown) == 300 and one in shown
    assert page.evaluate("document.getElementById('cb-count').textContent").startswith("300 of 300 cases")
    page.evaluate(f"location.hash = '#c-{one}'")
    row = page.wait_for_selector(f'tr[id="c-{one}"]')
    cells = row.query_selector_all("td")[2:]
    assert [c.inner_text() for c in cells] == [b.report.cells[(one, m)].label for m in b.report.data.metrics]
    page.close()


from tests.helpers.review_browser import browser  # noqa: E402, F401 - fixture
