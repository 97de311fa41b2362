"""Test support for the reports: a synthetic multi-metric run store, and a shared canonical run.

``synthetic_run`` writes a store whose cells imitate each vendor's definition applied to the
annotation's labels (each metric's ``label_reading``), without running any vendor code.
It exists so the report machinery (matrix, divergence rules, alignment, statistics, escaping) can be
tested quickly and independently of the adapters; the real numbers come from real runs.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile

from harness.core.records import CellResult, Ledger, Quote, UnitVerdict

SYNTHETIC_METRICS = ("inhouse.span", "ragas.faithfulness", "ragas.response_groundedness",
                     "deepeval.faithfulness", "deepeval.faithfulness_penalized", "trulens.groundedness",
                     "trulens.groundedness_answerability", "trulens.citation")
_DEEPEVAL_NORM = {"yes": "supported", "borderline": "ambiguous", "no": "unsupported"}


def _claim_units(case, raw_of, norm_of, kind="claim"):
    return [UnitVerdict(i, c.text, norm_of(c), str(raw_of(c)), kind, span=c.answer_span)
            for i, c in enumerate(case.judged_claims())]


def synthetic_cell(metric: str, case) -> CellResult:
    """What ``metric``'s definition gives on ``case`` under the reference label table (imitation)."""
    from harness.adapters.ragas.judge import rg_rating
    from harness.adapters.trulens.judge import sentence_score
    from harness.core.spans import sentence_spans
    from harness.metric import registry

    nli = registry.get("ragas.faithfulness").label_reading
    deepeval = registry.get("deepeval.faithfulness").label_reading
    claims = case.judged_claims()
    if metric == "inhouse.span":
        if not claims:
            return CellResult.unscored("no claims: the answer asserts nothing checkable")
        units = [UnitVerdict(i, c.text, "supported" if c.label == "supported" else "unsupported", c.label,
                             "claim", span=c.answer_span,
                             quotes=tuple(Quote(case.evidence_text(e), e.context_id, e.start, e.end, True)
                                          for e in c.evidence if c.label == "supported"))
                 for i, c in enumerate(claims)]
        return CellResult.scored(sum(u.verdict == "supported" for u in units) / len(units), units)
    if metric == "ragas.faithfulness":
        if not claims:
            return CellResult.vendor_nan("unscored by the vendor: no statements")
        units = _claim_units(case, lambda c: nli[c.label],
                             lambda c: "supported" if nli[c.label] else "unsupported", "statement")
        return CellResult.scored(sum(nli[c.label] for c in claims) / len(claims), units)
    if metric == "ragas.response_groundedness":
        if not case.answer.strip():
            return CellResult.vendor_nan("unscored by the vendor: empty response")
        r = rg_rating(claims)
        u = UnitVerdict(0, case.answer, "supported" if r == 2 else "unsupported" if r == 0 else "ambiguous",
                        str(r), "answer", span=(0, len(case.answer)))
        return CellResult.scored(r / 2, [u], flags=() if claims else ("no_claims_scored_1",))
    if metric.startswith("deepeval."):
        if not claims:
            return CellResult.scored(1, flags=("no_claims_scored_1",))
        raw = [deepeval[c.label] for c in claims]
        ok = ("yes",) if metric.endswith("penalized") else ("yes", "borderline")
        units = _claim_units(case, lambda c: deepeval[c.label], lambda c: _DEEPEVAL_NORM[deepeval[c.label]])
        return CellResult.scored(sum(v in ok for v in raw) / len(raw), units)
    if metric == "trulens.citation":
        cited = [c for c in claims if c.cited_context_id is not None]
        if not cited:
            return CellResult.not_applicable("no [N] citation markers in the answer")
        good = all(c.cited_context_id in {e.context_id for e in c.evidence} for c in cited)
        return CellResult.scored(1.0 if good else 0.0)
    if metric.startswith("trulens."):
        ab = case.abstention_at()
        units, scores = [], []
        for i, (s, e) in enumerate(sentence_spans(case.answer)):
            inside = case.claims_in((s, e))
            if inside:
                k = sentence_score(inside)
            elif ab is not None:
                k = 0 if (metric.endswith("answerability") and case.annotation.answerable) else 3
            else:
                units.append(UnitVerdict(i, case.answer[s:e], "excluded", "trivial", "sentence", span=(s, e)))
                continue
            scores.append(k / 3)
            units.append(UnitVerdict(i, case.answer[s:e], "supported" if k == 3 else "unsupported" if k == 0
                                     else "ambiguous", str(k), "sentence", span=(s, e)))
        if not scores:
            return CellResult.scored(0.0, units, flags=("all_trivial_scored_0",))
        return CellResult.scored(sum(scores) / len(scores), units)
    raise ValueError(f"no synthetic definition for {metric!r}")


def synthetic_run(run_dir: str, cases, metrics=SYNTHETIC_METRICS, cases_path: str | None = None,
                  run_id: str = "synthetic") -> str:
    """Write a synthetic store into ``run_dir``; return the store path."""
    from harness.cases.load import case_digest
    from harness.judge.reference import approx_tokens
    from harness.store.runstore import RunStore

    store = RunStore.create(run_dir)
    try:
        store.write_spec({"run_id": run_id, "cases": {"path": cases_path or cases.path, "sha256": cases.sha256,
                                                      "n": len(cases)},
                          "metrics": [{"name": m, "version": "1", "vendor": m.split(".")[0], "display_name": m,
                                       "unit": "claim", "higher_is_better": True} for m in metrics],
                          "judge": {"kind": "reference", "reference_version": "1"},
                          "packages": {"ragas": "0.4.3", "deepeval": "4.3.1"}})
        for case in cases:
            for k, m in enumerate(metrics):
                res = synthetic_cell(m, case)
                n = 0 if res.status == "not_applicable" else 1 + k % 3
                led = Ledger(calls=n, prompt_tokens=n * approx_tokens(case.answer + case.question) * 3,
                             completion_tokens=n * 20, latency_ms=n * 1.5)
                store.write_cell(case.id, m, "1", case_digest(case), res, led, [], 1.0)
    finally:
        store.close()
    return os.path.join(run_dir, RunStore.FILENAME)


@functools.lru_cache(maxsize=None)
def canonical_run(metrics: str = "all") -> tuple[str, str]:
    """Run the canonical set with the reference judge through the CLI, once per process (in a temp
    dir); (run dir, the command's stdout)."""
    from tests.conftest import ROOT

    out = tempfile.mkdtemp(prefix="harness-canonical-")
    cmd = [sys.executable, "-m", "harness", "run", "--metrics", metrics, "--run-id", "canonical",
           "--out", out, "--no-progress"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    if r.returncode not in (0, 1) or not os.path.isfile(os.path.join(out, "canonical", "store.sqlite")):
        raise RuntimeError(f"canonical run failed ({r.returncode}): {r.stderr[-2000:]}")
    return os.path.join(out, "canonical"), r.stdout


SCRIPT_Q = "<script>document.title='PWNED-Q'</script>"
SCRIPT_A = "<script>document.body.insertAdjacentHTML('beforeend','<div id=\"pwned-a\">PWNED</div>')</script>"
SCRIPT_C = "<img src=x onerror=\"document.title='PWNED-IMG'\"><script>document.title='PWNED-C'</script>"


def hostile_case(case_id: str = "script-injection") -> dict:
    """A valid case whose question, answer, context and claim texts carry markup that would change the
    page (title, an element with id ``pwned-a``) if a report ever rendered it instead of escaping it."""
    first = "The store opens at 9 am."
    answer = f"{first} {SCRIPT_A}"
    ctx = f"Opening hours: the store opens at 9 am on weekdays. {SCRIPT_C}"
    ev = "the store opens at 9 am"
    s = ctx.index(ev)
    return {
        "id": case_id, "question": f"When does the store open? {SCRIPT_Q}",
        "contexts": [{"id": "1", "text": ctx}], "answer": answer, "tags": ["security"],
        "annotation": {"answerable": True, "abstention": False, "abstention_span": None, "claims": [
            {"text": "The store opens at 9 am.", "answer_span": [0, len(first) - 1], "answer_quote": first[:-1],
             "label": "supported", "evidence": [{"context_id": "1", "start": s, "end": s + len(ev), "quote": ev}],
             "cited_context_id": None},
            {"text": SCRIPT_A, "answer_span": [len(first) + 1, len(answer)], "answer_quote": SCRIPT_A,
             "label": "not_found", "evidence": [], "cited_context_id": None}]},
    }


def write_hostile_cases(path: str, case_id: str = "script-injection") -> str:
    """Write a one-case JSONL file with :func:`hostile_case`; return the path."""
    import json

    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(hostile_case(case_id), ensure_ascii=False) + "\n")
    return path


TEN_METRICS = SYNTHETIC_METRICS + ("phoenix.faithfulness", "mlflow.groundedness")
"""Ten metrics for the report's scale bench and test (bench/bench_report.py): the eight above and two
answer-level binary verdicts (:func:`_answer_verdict`)."""


def _answer_verdict(case) -> CellResult:
    """An answer-level binary judge's verdict: 1 when every judged claim is supported, else 0; one unit."""
    claims = case.judged_claims()
    if not case.answer.strip():
        return CellResult.unscored("empty answer")
    ok = all(c.label == "supported" for c in claims)
    return CellResult.scored(1.0 if ok else 0.0, [UnitVerdict(0, case.answer, "supported" if ok else "unsupported",
                                                              "factual" if ok else "hallucinated", "answer",
                                                              span=(0, len(case.answer)))])


def scaled_run(run_dir: str, n: int, metrics=TEN_METRICS, run_id: str = "scaled") -> str:
    """A synthetic store of ``n`` cases (the canonical set cycled, new ids) x ``metrics``, without running a
    metric: the first copy of each canonical case gets its cells through the store API
    (``RunStore.write_cell``, the definitions of :func:`synthetic_cell`), and every further copy gets those
    cells, units and drift facts copied inside SQLite under its own id and digest (a 100,000-case store in
    seconds). The cases go in through ``RunStore.write_cases``. The store path. For the report's scale bench
    (bench/bench_report.py) and its size tests."""
    import dataclasses

    from harness.cases.load import case_digest, load_cases
    from harness.judge.reference import approx_tokens
    from harness.store.runstore import RunStore

    from tests.conftest import ROOT

    base = load_cases(os.path.join(ROOT, "datasets", "canonical.jsonl")).cases
    copies = [dataclasses.replace(base[i % len(base)], id=f"{base[i % len(base)].id}--s{i:06d}") for i in range(n)]
    store = RunStore.create(run_dir)
    try:
        store.write_spec({"run_id": run_id, "cases": {"path": "synthetic", "sha256": "0" * 64, "n": n},
                          "metrics": [{"name": m, "version": "1", "vendor": m.split(".")[0], "display_name": m,
                                       "unit": "claim", "higher_is_better": True} for m in metrics],
                          "judge": {"kind": "reference", "reference_version": "1"},
                          "packages": {"ragas": "0.4.3", "deepeval": "4.3.1"}})
        store.write_cases(copies)
        with store.batch():
            for case in copies[:len(base)]:
                for k, m in enumerate(metrics):
                    res = (_answer_verdict(case) if m in ("phoenix.faithfulness", "mlflow.groundedness")
                           else synthetic_cell(m, case))
                    c = 0 if res.status == "not_applicable" else 1 + k % 3
                    led = Ledger(calls=c, prompt_tokens=c * approx_tokens(case.answer + case.question) * 3,
                                 completion_tokens=c * 20, latency_ms=c * 1.5)
                    store.write_cell(case.id, m, "1", case_digest(case), res, led, [], 1.0)
        db = store.db
        db.execute("CREATE TEMP TABLE copy_of (new_id TEXT, src_id TEXT, digest TEXT)")
        db.executemany("INSERT INTO copy_of VALUES (?,?,?)",
                       [(c.id, copies[i % len(base)].id, case_digest(c)) for i, c in enumerate(copies)
                        if i >= len(base)])
        for table, digest in (("cells", True), ("units", False), ("cell_drift", False)):
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            pick = ", ".join("m.new_id" if c == "case_id" else "m.digest" if (c == "case_digest" and digest)
                             else f"t.{c}" for c in cols)
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {pick} FROM copy_of m "
                       f"JOIN {table} t ON t.case_id = m.src_id ORDER BY m.rowid")
            db.execute("COMMIT")
    finally:
        store.close()
    return os.path.join(run_dir, RunStore.FILENAME)
