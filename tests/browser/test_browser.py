"""The HTML report in headless Chromium: the sections render, a case full of markup stays inert, and
a screenshot of the first screen is kept as tests/browser/artifacts/report_first_screen.png; the two plots (the
frontier and the cost chart) are shown page-wide without sideways scrolling, and screenshots of their
sections are kept as tests/browser/artifacts/report_frontier.png and report_cost.png.

Skipped only when Chromium is absent outside CI; in CI (env CI set) a missing Chromium fails.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import ROOT
from tests.helpers.review_browser import browser  # noqa: F401 - the Playwright fixture
from tests.helpers.synthetic import SCRIPT_A, SCRIPT_Q, canonical_run, write_hostile_cases

ARTIFACTS = os.path.join(ROOT, "tests", "browser", "artifacts")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=3000"]


@pytest.fixture(scope="module")
def chromium():
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser test (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")

    def run(*args: str) -> str:
        with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
            r = subprocess.run([path, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                               text=True, timeout=180)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout

    return run


def url(path: str) -> str:
    return "file://" + os.path.abspath(path)


def test_canonical_report_renders(chromium):
    run_dir, _ = canonical_run()
    dom = chromium("--dump-dom", url(os.path.join(run_dir, "index.html")))
    for heading in ("Which metric for which need", "At a glance", "Score matrix", "Where they diverge", "Per metric", "Cost per metric",
                    "Evidence check"):
        assert f">{heading}</h2>" in dom, heading
    assert "judge: reference (annotation-driven)" in dom
    assert "<th>cookie-yield</th>" in dom
    assert ">0.75</td>" in dom and ">1.00</td>" in dom
    assert '<td class="s-unscored"' in dom and '<td class="s-vendor_nan"' in dom and '<td class="s-not_applicable"' in dom
    assert dom.count('src="data:image/png;base64,') == 1
    assert 'id="case-0"' in dom  # the first divergence has its alignment section


def test_first_screen_screenshot(chromium):
    run_dir, _ = canonical_run()
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "report_first_screen.png")
    if os.path.exists(shot):
        os.remove(shot)
    chromium("--window-size=1280,900", "--hide-scrollbars", f"--screenshot={shot}",
             url(os.path.join(run_dir, "index.html")))
    with open(shot, "rb") as fh:
        data = fh.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_the_plots_are_page_wide_and_screenshotted(browser):  # noqa: F811 - the fixture
    """At a laptop's window width the frontier and the cost chart fill most of the page, neither scrolls
    sideways, the frontier names n and the chance line; the sections' screenshots are kept."""
    run_dir, _ = canonical_run()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(url(os.path.join(run_dir, "index.html")))
        page.wait_for_function("(() => { const i = document.querySelector('#cost img');"
                               " return i && i.complete && i.naturalWidth > 0; })()")
        svg = page.locator("#frontier figure svg")
        box = svg.bounding_box()
        assert box["width"] >= 850 and box["height"] >= 450, box   # of a 1,280 px window
        title = page.evaluate("document.querySelector('#frontier figure svg title').textContent")
        assert "labelled answers per metric" in title and "dotted: chance (0.5)" in title, title
        sideways = page.evaluate("[...document.querySelectorAll('#frontier figure, #cost')]"
                                 ".map(e => e.scrollWidth - e.clientWidth)")
        assert sideways == [0, 0]
        natural, shown = page.evaluate("(() => { const i = document.querySelector('#cost img');"
                                       " return [i.naturalWidth, i.getBoundingClientRect().width]; })()")
        assert shown >= 900 and shown >= 0.9 * natural, (natural, shown)   # not shrunk to fit
        os.makedirs(ARTIFACTS, exist_ok=True)
        for key, name in (("frontier", "report_frontier.png"), ("cost", "report_cost.png")):
            path = os.path.join(ARTIFACTS, name)
            page.locator(f"#{key}").screenshot(path=path)
            with open(path, "rb") as fh:
                data = fh.read()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, name
    finally:
        page.close()


def test_markup_in_a_case_stays_inert(chromium, tmp_path):
    cases = write_hostile_cases(str(tmp_path / "hostile.jsonl"))
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", cases, "--metrics",
                        "inhouse.span,deepeval.faithfulness", "--out", str(tmp_path), "--run-id", "hostile",
                        "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    report = tmp_path / "hostile" / "index.html"
    dom = chromium("--dump-dom", url(str(report)))
    assert "<title>Groundedness report: hostile</title>" in dom
    assert "PWNED" not in dom.split("</title>")[0]
    assert '<div id="pwned-a">' not in dom  # the element the answer's script would insert
    assert '&lt;div id="pwned-a"&gt;' in dom  # ... shown as text instead
    assert "&lt;script&gt;document.title='PWNED-Q'&lt;/script&gt;" in dom  # shown as text
    assert "script-injection" in dom and "DeepEval Faithfulness counts 'borderline' as faithful" in dom


def test_the_inertness_check_detects_live_markup(chromium, tmp_path):
    """Control: the same markup left unescaped does run, so the test above would catch a leak."""
    page = tmp_path / "leak.html"
    page.write_text(f"<!DOCTYPE html><html><head><title>clean</title></head><body>{SCRIPT_Q}{SCRIPT_A}</body></html>")
    dom = chromium("--dump-dom", url(str(page)))
    assert "<title>PWNED-Q</title>" in dom and '<div id="pwned-a">PWNED</div>' in dom
