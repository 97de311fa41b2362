"""A real judge in the loop (opt-in, marker ``live``): the canonical cases x every metric through a
real OpenAI-compatible server, e.g. the small real model of ``../shared/realllm/setup.sh``.

    bash ../shared/realllm/setup.sh serve 1.5b 8081
    HARNESS_LIVE_JUDGE_URL=http://127.0.0.1:8081/v1 HARNESS_LIVE_JUDGE_MODEL=qwen2.5-coder-1.5b-instruct \\
        bash scripts/test.sh tests/vendors/test_live_judge.py -m live -s
    # the parity comparison too, on the replies a bench/realllm.py run recorded (HARNESS_LIVE_RECORD):
    HARNESS_LIVE_PARITY=1 HARNESS_LIVE_RECORD=/tmp/realllm-record.jsonl HARNESS_LIVE_CASES=all ...

Skipped unless ``HARNESS_LIVE_JUDGE_URL`` is set (``HARNESS_LIVE_JUDGE_MODEL`` names the model,
``HARNESS_LIVE_JUDGE_KEY_ENV`` the variable holding a key, if the server needs one). The cases are
:data:`DEFAULT_CASES` (7 of the 24, one of each kind; tens of minutes with the 1.5B model on 2
shared cores), or ``HARNESS_LIVE_CASES``: ``all`` or comma-separated ids. Concurrency 2.

What must hold with a real model: no cell errors because of the harness. A cell may still error
because the judge failed a call (the gateway retried it) or because the vendor's own code raised on
what the model wrote; the test prints those, and fails on any error raised in the harness's own code
(``detail.raised_in`` under ``harness.`` or ``harness.adapters.``) and on any judge request the gateway
itself could not serve. :func:`live_parity` is the stock-parity comparison against the same judge,
for the strict parity test to call with its URL.
"""
import os

from harness.cases import CaseSet
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import pytest

pytestmark = pytest.mark.live

URL = os.environ.get("HARNESS_LIVE_JUDGE_URL")
MODEL = os.environ.get("HARNESS_LIVE_JUDGE_MODEL", "")
KEY_ENV = os.environ.get("HARNESS_LIVE_JUDGE_KEY_ENV")
DEFAULT_CASES = ("cookie-yield", "release-date-contradicted", "refund-invented", "abstain-answerable",
                 "citation-misattributed", "multi-hop", "empty-answer")
"""One case of each kind (the subset ``bench/realllm.py`` was run on): partly grounded, contradicted,
invented, an abstention, [N] citations, two passages, the empty answer."""
HARNESS_CODE = ("harness.", "harness.adapters.")
JUDGE_FAILED = ("JudgeHTTPError: judge HTTP ", "judge call failed after ")
"""Reasons of a cell whose judge call failed (a non-2xx status or no answer in time, after the retries):
raised by the harness's endpoint (``harness.metric.protocol``) or the vendor's retry, but the judge's."""

needs_judge = pytest.mark.skipif(not URL, reason="set HARNESS_LIVE_JUDGE_URL (and HARNESS_LIVE_JUDGE_MODEL)")


def live_cases(canonical) -> CaseSet:
    """The canonical cases this run covers (see the module docstring)."""
    want = os.environ.get("HARNESS_LIVE_CASES", ",".join(DEFAULT_CASES))
    if want.strip() == "all":
        return canonical
    ids = [i.strip() for i in want.split(",") if i.strip()]
    return CaseSet(canonical.path, tuple(canonical.by_id(i) for i in ids), canonical.sha256)


def run_live(url: str, model: str, cases, out: str, metrics=None, key_env: str | None = None) -> list[tuple]:
    """Every metric (or ``metrics``) on ``cases`` through the judge at ``url``; the cells as
    (case, metric, status, score, reason, detail JSON, judge errors, flags JSON)."""
    from harness.metric import registry

    outcome = run(RunOptions(cases=cases, metrics=list(metrics or registry.names()), out_dir=out, run_id="live",
                             progress=False, judge=JudgeConfig(url=url, model=model, key_env=key_env),
                             cache_mode="live", concurrency=2, cell_timeout_s=1800, call_timeout_s=600))
    store = RunStore.open(outcome.store_path)
    try:
        return store.rows("SELECT case_id, metric, status, score, reason, detail, errors, flags FROM cells")
    finally:
        store.close()


def harness_errors(cells) -> list[tuple]:
    """The error cells the harness caused: raised in its own code (``detail.raised_in``), or a reply the
    gateway could not hand on ("judge reply unusable"). A judge call the judge itself failed, after the
    gateway's retries, is the judge's."""
    import json

    out = []
    for case_id, metric, status, _score, reason, detail, _errors, _flags in cells:
        if status != "error":
            continue
        raised_in = json.loads(detail or "{}").get("raised_in") or ""
        if (reason or "").startswith(JUDGE_FAILED):   # the judge answered non-2xx, or not in time
            continue
        if raised_in.startswith(HARNESS_CODE) or "judge reply unusable" in (reason or ""):
            out.append((case_id, metric, raised_in, reason))
    return out


STOCK_SCRIPT = ("ragas", "deepeval", "trulens")
"""The vendors of ``tests/vendors/test_stock_parity.py``; the others are :mod:`tests.vendors.test_stock_parity_more`'s (each runs its
folder's ``kit/stock.py``; Azure's runs in its own environment: ``tests/vendors/test_azure_parity.py``)."""


def _stock_env() -> dict:
    """The vendors' own switches the strict parity tests run the stock side with (telemetry off)."""
    from tests.vendors.test_stock_parity import STOCK_ENV
    from tests.vendors.test_stock_parity_more import SWITCHES

    return {**STOCK_ENV, **SWITCHES}


def stock_runs(url: str, model: str, cases, tmp: str, vendors: tuple[str, ...] | None = None) -> dict:
    """metric -> case -> [score, exception, message]: each vendor's documented usage (the strict parity
    test's stock scripts, copied into ``tmp`` and run there, importing nothing of the project) against
    the judge at ``url``."""
    import json
    import subprocess

    from harness.adapters.trulens.kit.stock import MARKED_ONLY

    from tests.helpers import kits
    from tests.vendors.test_stock_parity import plain_cases
    from tests.vendors.test_stock_parity_more import VENDORS as MORE

    plain = plain_cases(cases, os.path.join(tmp, "stock-cases.json"))
    # TruLens's citation check is asked only of answers with [N] markers (the rest are not_applicable in
    # the harness, and a real model asked anyway writes until its context is full: trulens's kit/stock.py)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, **_stock_env(), MARKED_ONLY: "1"}
    out: dict = {}
    for vendor in (v for v in (*STOCK_SCRIPT, *MORE) if vendors is None or v in vendors):
        work = os.path.join(tmp, f"stock-{vendor}")
        os.makedirs(work, exist_ok=True)
        p = subprocess.run([*kits.stock_argv(vendor, work), model, plain, url], cwd=tmp, env=env,
                           capture_output=True, text=True, timeout=4 * 3600)
        assert p.returncode == 0, f"stock {vendor}: {p.stderr[-3000:]}"
        data = json.loads(p.stdout.strip().splitlines()[-1])
        assert data["project_modules"] == [], data["project_modules"]
        out.update(data["runs"][url])
    return out


def live_parity(url: str, model: str, cases, out: str, key_env: str | None = None,
                record: str | None = None, vendors: tuple[str, ...] | None = None) -> tuple[list[tuple], dict]:
    """The strict stock-parity rows against the real judge at ``url`` (root or ``.../v1``), and the relay's
    counts: the harness's cells and each vendor's own usage, both through one recording relay
    (:mod:`tests.helpers.judges.same_replies`), so the same request gets the same reply whoever asks (a real
    model's reply to one prompt can change between two calls: that is the judge's wobble, not a
    difference of the harness's). A stock request the relay answers from the record is one the harness
    sent byte for byte (JSON keys sorted); one it must forward, the harness never sent. ``record``: a
    JSONL file of replies kept across runs (``bench/realllm.py --record`` writes one).

    The server's kind is read from what it answered the Responses API (a 2xx: ``openai``; else the
    chat-only mode of that status), and the rows are judged by ``tests.vendors.test_stock_parity.compare`` and its
    table of allowed differences for that mode."""
    from tests.helpers.judges import same_replies
    from tests.vendors.test_stock_parity import METRICS, compare
    from tests.vendors.test_stock_parity_more import VENDORS as MORE

    metrics = tuple(m for m in (*METRICS, *(m for *_, ms, _ in MORE.values() for m in ms))
                    if vendors is None or m.split(".")[0] in vendors)
    relay = same_replies.serve(url.removesuffix("/").removesuffix("/v1"), record=record)
    base = f"http://127.0.0.1:{relay.server_address[1]}"
    try:
        cells = {(c, m): (s, sc, r or "", f or "", d or "")
                 for c, m, s, sc, r, d, _e, f in run_live(f"{base}/harness/v1", model, cases, out, metrics, key_env)}
        stock = stock_runs(f"{base}/stock/v1", model, cases, out, vendors)
        counts = {side: dict(c) for side, c in relay.RequestHandlerClass.relay_record.counts.items()}
        statuses = relay.RequestHandlerClass.relay_record.statuses
    finally:
        relay.shutdown()
        relay.server_close()
    mode = "openai" if statuses.get("/responses", 200) < 300 else (
        "chat-404" if statuses["/responses"] == 404 else "chat-400")
    rows = [compare(mode, m, c, {mode: stock}, cells[(c.id, m)]) for m in metrics for c in cases]
    return rows, {"mode": mode, **counts}


@needs_judge
def test_a_real_judge_scores_the_canonical_cases_with_no_error_of_the_harness(canonical, tmp_path):
    cells = run_live(URL, MODEL, live_cases(canonical), str(tmp_path), key_env=KEY_ENV)
    by_status: dict = {}
    for case_id, metric, status, _s, reason, *_ in cells:
        by_status.setdefault(metric, {}).setdefault(status, []).append(f"{case_id}: {(reason or '')[:100]}")
    for metric, statuses in sorted(by_status.items()):
        print(metric, {s: len(v) for s, v in statuses.items()})
        for s in ("error", "unscored", "vendor_nan"):
            for line in statuses.get(s, ()):
                print(f"    {s}: {line}")
    assert len(cells) == len(live_cases(canonical)) * len(by_status)
    assert not harness_errors(cells), harness_errors(cells)


@needs_judge
@pytest.mark.skipif(os.environ.get("HARNESS_LIVE_PARITY") != "1",
                    reason="set HARNESS_LIVE_PARITY=1: the stock side scores every canonical case again")
def test_stock_parity_holds_against_the_real_judge(canonical, tmp_path):
    from tests.vendors.test_stock_parity import render

    vendors = os.environ.get("HARNESS_LIVE_VENDORS")   # e.g. ragas,deepeval,trulens (default: all)
    rows, counts = live_parity(URL, MODEL, live_cases(canonical), str(tmp_path), KEY_ENV,
                               os.environ.get("HARNESS_LIVE_RECORD"), tuple(vendors.split(",")) if vendors else None)
    print("\n" + render(rows).split("\n\nper mode")[0])
    print("per metric: same / allowed / DIFFERENT")
    for m in dict.fromkeys(r[1] for r in rows):
        got = [r[5] for r in rows if r[1] == m]
        print(f"  {m:36} {got.count('same'):3} / {got.count('allowed'):3} / {got.count('DIFFERENT'):3}")
    print("relay:", counts)
    assert rows and not [r for r in rows if r[5] == "DIFFERENT"], render([r for r in rows if r[5] == "DIFFERENT"])
