"""Strict stock parity: every vendor metric scores what the vendor's own documented usage scores against
the same judge, for each kind of server.

The judges are the realistic test judge (``tests.helpers.judges.realistic``) in its three server modes
(``SERVER_MODES``): chat-only answering the Responses API with 404 (llama.cpp's server), chat-only
answering it with 400 "not supported", and OpenAI-like (Responses API and structured outputs). In each
mode a json_schema constrains the reply, json_object gives JSON, and no format lets prose, fences and
stray keys through, so a side that asks differently gets a differently written reply.

- Stock side: each vendor's ``kit/stock.py`` (in its folder), copied with ``tests/helpers/stock_common.py`` into a
  temporary folder and run there as a script, one process per vendor for all three judges. It imports nothing of the project (it reports the modules it
  sees; the test requires none) and gets no setting of the project's: only the judge URLs, the model
  name, the cases as plain JSON, and the vendors' own telemetry switches.
- Harness side: a harness run of all seven metrics through ``--judge-url`` to a judge of the same mode
  (a separate server, so each side's books are its own; replies depend on the prompt and the format only).

Cases: the 24 canonical cases plus ``tests/data/citation_parity.jsonl`` (8 answers with ``[N]``
markers, correct and misattributed; with the canonical two, 10 citation cases).

Every difference must match one row of :data:`ALLOWED`, which names the exact exception the stock side
raises, the status the harness records, and why (each on the metric's card). The parity table is printed
(``pytest -s``) and written to the test's temp dir.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from harness.cases.load import load_cases
from harness.run.runner import JudgeConfig, RunOptions, run
from harness.store.runstore import RunStore

import httpx
import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers import kits, parity
from tests.helpers.judges.realistic import MODEL, SERVER_MODES, start
from tests.helpers.parity import ANY, USAGE_TWIN, Allowed

METRICS = ("ragas.faithfulness", "ragas.response_groundedness", "deepeval.faithfulness",
           "deepeval.faithfulness_penalized", "trulens.groundedness", "trulens.groundedness_answerability",
           "trulens.citation")
TRULENS = ("trulens.groundedness", "trulens.groundedness_answerability", "trulens.citation")
VENDORS = ("ragas", "deepeval", "trulens")
MODE_METRICS = {"chat-404": METRICS, "chat-400": TRULENS, "openai": METRICS}
"""What each mode scores: Ragas and DeepEval never call the Responses API, so the two chat-only modes are
the same server to them and the 400 mode is scored for TruLens only."""
CITATION_CASES = os.path.join(ROOT, "tests", "data", "citation_parity.jsonl")
STOCK_ENV = {k: v for script in kits.parts("stock").values() if hasattr(script, "score_urls")
             for k, v in script.ENV.items()}
"""The vendors' own telemetry switches (``ENV`` of each one's ``kit/stock.py``): the only environment the stock
side gets beyond PATH and HOME."""


ALLOWED = parity.rules()
"""Every vendor's allowed differences (``RULES`` in its folder's ``kit/parity.py``: :mod:`tests.helpers.parity`)."""


class JudgeProcess:
    """A realistic judge served by its own process (``python -m tests.helpers.judges.realistic``): the stock side's
    judge. In the test's own process its threads would wait on the harness run (one interpreter lock), and
    on a busy machine stock DeepEval, which opens a new connection per call, then meets connect timeouts
    (``APIConnectionError``) that are the test's doing, not the metric's."""

    def __init__(self, mode: str, *options: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.helpers.judges.realistic", "--port", "0", "--mode", mode,
                                      "--secret", *options], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.url = json.loads(self.proc.stdout.readline())["url"]

    def stats(self) -> dict:
        return httpx.get(self.url.removesuffix("/v1") + "/stats", timeout=60).json()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def _cases_file(tmp: str) -> str:
    """The canonical cases plus the citation cases, as one JSONL file."""
    path = os.path.join(tmp, "cases.jsonl")
    with open(path, "w", encoding="utf-8") as out:
        for src in (CANONICAL, CITATION_CASES):
            with open(src, encoding="utf-8") as fh:
                out.writelines(line if line.endswith("\n") else line + "\n" for line in fh if line.strip())
    return path


def plain_cases(cases, path: str) -> str:
    """Write ``cases`` as the stock scripts read them (a JSON list of id, question, answer, contexts: no
    object of the project's); return ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump([{"id": c.id, "question": c.question, "answer": c.answer, "contexts": list(c.context_texts)}
                   for c in cases], fh)
    return path


def _usage_twins(tmp: str, cases, stock: dict) -> dict:
    """Stock DeepEval again, on the cases where it raised on a reply without usage, against judges whose
    replies all carry usage (otherwise the same replies): ``{mode + USAGE_TWIN: runs}``."""
    raised = {m: {c.id for c in cases for x in ("deepeval.faithfulness", "deepeval.faithfulness_penalized")
                  if stock[m].get(x, {}).get(c.id, [None, None])[1] == "AttributeError"} for m in SERVER_MODES}
    again = [c for c in cases if any(c.id in ids for ids in raised.values())]
    if not again:
        return {}
    judges = {m: JudgeProcess(m, "--usage-always") for m in SERVER_MODES if raised[m]}
    try:
        plain = plain_cases(again, os.path.join(tmp, "twin-cases.json"))
        work = os.path.join(tmp, "stock-twin")
        os.makedirs(work, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, **STOCK_ENV}
        p = subprocess.run([*kits.stock_argv("deepeval", work), MODEL, plain, *(j.url for j in judges.values())],
                           cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, f"stock deepeval (usage twin) failed:\n{p.stderr[-3000:]}"
        runs = json.loads(p.stdout.strip().splitlines()[-1])["runs"]
        return {m + USAGE_TWIN: runs[j.url] for m, j in judges.items()}
    finally:
        for j in judges.values():
            j.stop()


def _stock_processes(tmp: str, cases, judges: dict) -> dict:
    """Start one stock process per vendor (all its judges in one process); returns vendor -> Popen."""
    plain = plain_cases(cases, os.path.join(tmp, "stock-cases.json"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, **STOCK_ENV}
    urls = {v: [judges[m].url for m in SERVER_MODES if any(x.startswith(v + ".") for x in MODE_METRICS[m])]
            for v in VENDORS}
    argv = {}
    for v in VENDORS:
        os.makedirs(os.path.join(tmp, f"stock-{v}"), exist_ok=True)
        argv[v] = kits.stock_argv(v, os.path.join(tmp, f"stock-{v}"))
    return {v: subprocess.Popen([*argv[v], MODEL, plain, *urls[v]], cwd=tmp, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for v in VENDORS}


def _harness(cases, url: str, mode: str, out: str) -> dict:
    return _harness_run(cases, url, MODE_METRICS[mode], out, f"parity-{mode}")


def _harness_run(cases, url: str, metrics, out: str, run_id: str) -> dict:
    """(case, metric) -> (status, score, reason, flags, detail JSON) of a harness run through ``--judge-url``."""
    outcome = run(RunOptions(cases=cases, metrics=list(metrics), out_dir=out, run_id=run_id,
                             progress=False, judge=JudgeConfig(url=url, model=MODEL), cache_mode="live"))
    store = RunStore.open(outcome.store_path)
    try:
        return {(r[0], r[1]): (r[2], r[3], r[4] or "", r[5] or "", r[6] or "") for r in store.rows(
            "SELECT case_id, metric, status, score, reason, flags, detail FROM cells")}
    finally:
        store.close()


@pytest.fixture(scope="module")
def parity(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("parity"))
    cases = load_cases(_cases_file(tmp))
    stock_judges = {m: JudgeProcess(m) for m in SERVER_MODES}   # their own processes: no GIL shared with the run
    harness_judges = {m: start(mode=m, secret=True) for m in SERVER_MODES}
    try:
        procs = _stock_processes(tmp, cases, stock_judges)
        harness = {m: _harness(cases, harness_judges[m].url, m, tmp) for m in SERVER_MODES}
        stock, leaked = {m: {} for m in SERVER_MODES}, {}
        for vendor, p in procs.items():
            out, err = p.communicate(timeout=900)
            assert p.returncode == 0, f"stock {vendor} failed:\n{err[-3000:]}"
            data = json.loads(out.strip().splitlines()[-1])
            leaked[vendor] = data["project_modules"]
            for m in SERVER_MODES:
                stock[m].update(data["runs"].get(stock_judges[m].url, {}))
        books = {m: (stock_judges[m].stats(), harness_judges[m].stats()) for m in SERVER_MODES}
        stock.update(_usage_twins(tmp, cases, stock))
    finally:
        for j in stock_judges.values():
            j.stop()
        for s in harness_judges.values():
            s.server.shutdown()
            s.server.server_close()
    with open(os.path.join(tmp, "parity-data.json"), "w", encoding="utf-8") as fh:
        json.dump({"stock": stock, "harness": {m: {f"{k[0]} {k[1]}": v for k, v in h.items()}
                                               for m, h in harness.items()}}, fh)
    rows = [compare(mode, metric, c, stock, harness[mode][(c.id, metric)])
            for mode in SERVER_MODES for metric in MODE_METRICS[mode] for c in cases]
    table = render(rows)
    print("\n" + table)
    with open(os.path.join(tmp, "parity-table.txt"), "w", encoding="utf-8") as fh:
        fh.write(table + "\n")
    return rows, leaked, books, cases


def harness_exception(cell: tuple) -> str:
    """The exception a harness error cell recorded: the vendor's own (``detail.exception``, the fifth item
    when present: an adapter's wrapper such as ``RagasStepError`` unwrapped to its cause), else the type
    named at the head of the reason."""
    detail = cell[4] if len(cell) > 4 else None
    if isinstance(detail, str):
        detail = json.loads(detail or "{}")
    return (detail or {}).get("exception") or (cell[2] or "").split(":", 1)[0]


def _same(stock: list, cell: tuple) -> bool:
    """The same outcome: the same score, NaN for NaN, or the same exception (stock raised it, the harness
    recorded the cell as an error raised by the vendor's code with that type: the vendor's own code failed
    alike on the same replies, as a real model's unparseable reply makes it). The exception is the
    vendor's, never a harness wrapper's (:func:`harness_exception`); qualified names compare whole."""
    score, raised, _ = stock
    status, value = cell[0], cell[1]
    if raised is not None:
        got = harness_exception(cell)
        return status == "error" and (got == raised if "." in got else got == raised.rsplit(".", 1)[-1])
    if score is None or math.isnan(score):
        return status == "vendor_nan"
    return status == "scored" and value is not None and math.isclose(value, score, abs_tol=1e-9)


def allowed(mode: str, metric: str, case, stock: dict, cell: tuple) -> Allowed | None:
    """The row of :data:`ALLOWED` that explains this difference exactly, or None."""
    _, raised, message = stock[mode][metric][case.id]
    status, flags = cell[0], cell[3]
    for rule in ALLOWED:
        if metric not in rule.metrics or mode not in rule.modes or rule.stock_raises not in (raised, ANY):
            continue
        if (rule.when and not rule.when(case)) or (rule.stock_says and rule.stock_says not in (message or "")):
            continue
        if rule.same_as_mode:   # the harness took stock's path of that mode: judged by that mode's rows
            other = mode + rule.same_as_mode if rule.same_as_mode.startswith("+") else rule.same_as_mode
            if case.id in stock.get(other, {}).get(metric, {}) and \
                    compare(other, metric, case, stock, cell)[5] in ("same", "allowed"):
                return rule
            continue
        if status != rule.harness_status or (rule.harness_flag and rule.harness_flag not in flags):
            continue
        return rule
    return None


def compare(mode: str, metric: str, case, stock: dict, cell: tuple) -> tuple:
    """(mode, metric, case, stock, harness, verdict, why): verdict ``same``, ``allowed`` or ``DIFFERENT``."""
    s = stock[mode][metric][case.id]
    status, score, reason = cell[:3]
    shown = f"{status} {score:.4f}" if score is not None else status
    stock_shown = f"raised {s[1]}" if s[1] else ("NaN" if s[0] is None or math.isnan(s[0]) else f"{s[0]:.4f}")
    if _same(s, cell):
        return mode, metric, case.id, stock_shown, shown, "same", ""
    rule = allowed(mode, metric, case, stock, cell)
    if rule is not None:
        return mode, metric, case.id, stock_shown, shown, "allowed", rule.name
    return mode, metric, case.id, stock_shown, shown, "DIFFERENT", (reason or s[2] or "")[:90]


def render(rows) -> str:
    head = ("mode", "metric", "case", "stock", "harness", "parity")
    widths = [max(len(str(r[i])) for r in [*rows, head]) for i in range(6)]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(head, widths)) + "  why"]
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(r[:6], widths)) + f"  {r[6]}" for r in rows]
    lines += ["", "per mode and metric: same / allowed / DIFFERENT"]
    for mode in SERVER_MODES:
        for m in MODE_METRICS[mode]:
            got = [r[5] for r in rows if r[0] == mode and r[1] == m]
            lines.append(f"  {mode:9} {m:36} {got.count('same'):3} / {got.count('allowed'):3} / "
                         f"{got.count('DIFFERENT'):3}")
    return "\n".join(lines)


@pytest.mark.parametrize("mode,metric", [(mode, m) for mode in SERVER_MODES for m in MODE_METRICS[mode]])
def test_harness_scores_what_the_vendors_own_usage_scores(metric, mode, parity):
    rows, *_ = parity
    mine = [r for r in rows if r[0] == mode and r[1] == metric]
    different = [r for r in mine if r[5] == "DIFFERENT"]
    assert not different, "\n" + render(different)
    floor = 8 if metric == "trulens.citation" else 20
    if not (mode == "chat-404" and metric.startswith("trulens.")):
        assert sum(r[5] == "same" for r in mine) >= floor, "\n" + render(mine)


def test_the_stock_side_imports_nothing_of_the_project(parity):
    _, leaked, *_ = parity
    assert leaked == {v: [] for v in VENDORS}


def test_citation_parity_rests_on_at_least_8_marked_cases_correct_and_misattributed(parity):
    rows, _, _, cases = parity
    marked = {c.id for c in cases if "[" in c.answer}
    for mode in SERVER_MODES:
        same = [r for r in rows if r[0] == mode and r[1] == "trulens.citation" and r[2] in marked
                and (r[5] == "same" or (r[5] == "allowed" and mode == "chat-404"))]
        scores = {r[4] for r in same}
        assert len(same) >= 8 and any("1.0000" in s for s in scores) and any("0.0000" in s for s in scores), same


def test_each_allowed_difference_occurs(parity):
    """Every row of the table is needed: a rule nothing matches any more is stale and must go."""
    rows, *_ = parity
    used = {r[6] for r in rows if r[5] == "allowed"}
    want = {a.name for a in ALLOWED if not a.live_only}
    assert used == want, want - used


def test_the_judges_recognised_every_request_and_refused_the_responses_api_only_in_chat_modes(parity):
    _, _, books, _ = parity
    for mode, (stock, harness) in books.items():
        for b in (stock, harness):
            assert b["unrecognised"] == 0 and b["crashed"] == 0, (mode, b)
        assert (stock["refused"] > 0) == (mode != "openai"), (mode, stock["refused"])
        assert (harness["refused"] > 0) == (mode != "openai"), (mode, harness["refused"])


def test_each_side_sent_the_judge_the_same_kinds_of_request(parity):
    """Endpoint and output format of every request, per mode: the harness asks what stock asks (the
    Responses API with a json_schema only where the server has it; chat completions without a format
    after a chat-only server's refusal)."""
    _, _, books, _ = parity
    for mode, (stock, harness) in books.items():
        assert set(stock["requests"]) == set(harness["requests"]), (mode, stock["requests"], harness["requests"])
    assert "responses json_schema" in books["openai"][1]["requests"]


@pytest.mark.parametrize("metric", METRICS)
def test_every_vendor_card_lists_the_deviations_the_harness_forces(metric):
    """Each deviation from stock use is on the metric's card with its reason (issue 11 item 2), the
    TruLens provider shim with its Responses API fallback and its measured effect (issue 21)."""
    with open(os.path.join(ROOT, "reports", "cards", f"{metric}.md"), encoding="utf-8") as fh:
        card = " ".join(fh.read().split())
    assert "Deviations from stock use" in card and "Reason:" in card
    wanted = {"deepeval": ("DEEPEVAL_RETRY_MAX_ATTEMPTS=1", "eval_mode=\"llm\"", "One client per cell"),
              "ragas": ("Instructor retry policy", "max_retries=0", "InstructorRetryException", "Measured effect"),
              "trulens": ("2/4/8 s sleeps", "Responses API", "a 404 from the Responses API",
                          "Measured effect")}[metric.split(".")[0]]
    assert all(w in card for w in wanted), [w for w in wanted if w not in card]
