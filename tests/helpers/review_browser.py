"""Test support for the browser tests of ``harness review`` and the report: Debian's Chromium driven by
Playwright's Python package (``executable_path``: no browser download), a review server in a child
process that a test can kill with SIGKILL and start again, and helpers that act as a person would (mouse
drags over passage text, key presses)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

ARTIFACTS = os.path.join(ROOT, "tests", "browser", "artifacts")


def chromium_path() -> str:
    """The system Chromium (skip outside CI when absent; in CI a missing one fails)."""
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser tests (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return path


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module (Playwright over the system binary)."""
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


class ReviewServer:
    """``harness review`` in a child process on a free loopback port."""

    def __init__(self, *args: str):
        self.args = args
        self.proc = None
        self.url = None

    def start(self) -> "ReviewServer":
        cmd = [sys.executable, "-m", "harness", "review", *self.args, "--port", "0"]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "open http://" in line:
                self.url = line.split("open ", 1)[1].split()[0]
                return self
        self.kill()
        raise RuntimeError(f"review server did not start: {''.join(lines)} {self.proc.stderr.read()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, so what survives is what was on disk."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


RECTS_JS = """([sel, s, e]) => {
  const box = document.querySelector(sel);
  const at = (off) => { const w = document.createTreeWalker(box, NodeFilter.SHOW_TEXT); let n;
    while ((n = w.nextNode())) { if (off < n.length) return [n, off]; off -= n.length; } };
  const rect = (off) => { const [n, o] = at(off); const r = document.createRange(); r.setStart(n, o); r.setEnd(n, o + 1);
    return r.getBoundingClientRect(); };
  const a = rect(s), b = rect(e - 1);
  return [a.left + 1, a.top + a.height / 2, b.right - 1, b.top + b.height / 2];
}"""


def drag_select(page, context_id: str, start: int, end: int) -> None:
    """Select passage text [start, end) with the mouse: press on the first character, drag, release on the last."""
    x1, y1, x2, y2 = page.evaluate(RECTS_JS, [f'#passages .text[data-context="{context_id}"]', start, end])
    page.mouse.move(x1, y1)
    page.mouse.down()
    page.mouse.move((x1 + x2) / 2, (y1 + y2) / 2, steps=4)
    page.mouse.move(x2, y2, steps=4)
    page.mouse.up()


def click_in_answer(page, offset: int) -> None:
    """Put the caret in the answer just before character ``offset`` with a mouse click."""
    x1, y1, _, _ = page.evaluate(RECTS_JS, ["#answer", offset, offset + 1])
    page.mouse.click(x1 - 1, y1)


def settled(page) -> None:
    """Wait until the page has loaded its answer and every save has been answered."""
    page.wait_for_function("window.reviewApp && window.reviewApp.ready && window.reviewApp.pending === 0", timeout=30_000)


def goto_answer(page, pos: int) -> None:
    """Show answer ``pos`` (0-based) and wait for it."""
    page.evaluate("p => { window.reviewApp.ready = false; location.hash = '#' + (p + 1); }", pos)
    page.wait_for_function(f"window.reviewApp.ready && window.reviewApp.pos === {pos}", timeout=30_000)


def shot(page, name: str) -> str:
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, name)
    page.screenshot(path=path, full_page=False)
    return path
