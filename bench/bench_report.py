"""The report's build at scale: synthetic run stores of growing size (cases x 10 metrics, written straight
through the store API by ``tests.helpers.synthetic.scaled_run``: no metric runs, a zero-latency judge in effect), and
for each the report's build time (CPU and wall, in this process), the HTML's size, and the page's height in
Debian's Chromium (headless, through Playwright, at 1280 x 900 and 390 x 844).

    .venv/bin/python bench/bench_report.py                  # 10,000, 30,000 and 100,000 cases
    .venv/bin/python bench/bench_report.py --sizes 1000 --profile   # and the top of a cProfile of each build
    .venv/bin/python bench/bench_report.py --sizes 10000,30000 --against /path/to/older/checkout --no-browser

``--against DIR`` also builds each store with the code of another checkout (``git worktree add --detach DIR REV``;
this checkout's virtualenv, DIR first on the path), in a child process, before and after this code's build
(the better of the two), and prints the CPU ratio: both figures come from the same run, under the same load.

Stores are kept under --stores (default a temp dir) and reused when present: making the 100,000-case store
takes a few minutes and is not part of the figure.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.helpers.synthetic import scaled_run  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def store_for(stores: str, n: int) -> str:
    run_dir = os.path.join(stores, f"n{n}")
    path = os.path.join(run_dir, "store.sqlite")
    if not os.path.isfile(path):
        tmp = run_dir + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        t0 = time.monotonic()
        scaled_run(tmp, n, run_id=f"scaled-{n}")
        os.rename(tmp, run_dir)
        print(f"  made the {n:,}-case store in {time.monotonic() - t0:.1f} s", flush=True)
    return run_dir


def page_heights(html_path: str) -> dict[str, int]:
    """The page's full height (document scrollHeight, px) at a desktop and a phone viewport."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            for w, h in ((1280, 900), (390, 844)):
                page = b.new_page(viewport={"width": w, "height": h})
                page.goto("file://" + os.path.abspath(html_path), timeout=600_000)
                out[f"{w}"] = page.evaluate("document.documentElement.scrollHeight")
                page.close()
        finally:
            b.close()
    return out


def build_one(run_dir: str, out: str, profile: int) -> tuple[float, float]:
    from harness.reports.build import build

    prof = cProfile.Profile() if profile else None
    c0, t0 = cpu(), time.monotonic()
    if prof:
        prof.enable()
    build(run_dir, out)
    if prof:
        prof.disable()
    wall, used = time.monotonic() - t0, cpu() - c0
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(profile)
        print(s.getvalue())
    return wall, used


OTHER = """
import os, resource, sys
sys.path.insert(0, os.getcwd())
from harness.reports.build import build
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0 = cpu()
build(sys.argv[1], sys.argv[2])
print(cpu() - c0)
"""


def build_other(checkout: str, run_dir: str, out: str) -> float:
    """CPU seconds of the build of ``run_dir`` by the code of another checkout (imports paid before the clock)."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
    r = subprocess.run([sys.executable, "-c", "import harness.reports.build\n" + OTHER, run_dir, out],
                       cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,30000,100000")
    ap.add_argument("--stores", default=os.path.join(tempfile.gettempdir(), "bench-report-stores"))
    ap.add_argument("--profile", type=int, default=0, help="print the top N functions of a cProfile of each build")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--against", help="another checkout whose build of the same stores is timed too (see above)")
    args = ap.parse_args()
    os.makedirs(args.stores, exist_ok=True)
    import harness.reports.build  # noqa: F401 - imports paid before the clock starts

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        run_dir = store_for(args.stores, n)
        out = os.path.join(args.stores, f"report-n{n}")
        other = build_other(args.against, run_dir, out + "-other") if args.against else None
        wall, used = build_one(run_dir, out, args.profile)
        if args.against:
            other = min(other, build_other(args.against, run_dir, out + "-other"))
            print(f"  {n:,} cases: {args.against} {other:.1f} s CPU, this checkout {used:.1f} s CPU: "
                  f"{other / used:.2f}x", flush=True)
        html = os.path.join(out, "index.html")
        mb = os.path.getsize(html) / 1e6
        px = {} if args.no_browser else page_heights(html)
        rows.append((n, wall, used, mb, px))
        print(f"  {n:,} cases x 10 metrics: build {wall:.1f} s wall ({used:.1f} s CPU), HTML {mb:.1f} MB, "
              f"page {px} px", flush=True)
    # linearity: CPU seconds per 1,000 cases at each size, and that figure over the smallest size's (1.00: linear)
    base = rows[0][2] / rows[0][0] if rows else 0.0
    print("\n| cases x 10 metrics | build s (wall) | build s (CPU) | CPU s per 1,000 cases | per case vs smallest | "
          "HTML MB | page px (1280 / 390 wide) |\n|---|---|---|---|---|---|---|")
    for n, wall, used, mb, px in rows:
        per = used / n
        print(f"| {n:,} | {wall:.1f} | {used:.1f} | {per * 1000:.2f} | {per / base if base else 0:.2f}x | {mb:.1f} | "
              f"{' / '.join(f'{v:,}' for v in px.values()) or '-'} |")
    print(f"\nload at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
