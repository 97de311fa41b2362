"""An unannotated copy of the canonical set, end to end through --judge-url to the shipped realistic
test judge (issue 11): the run writes a report that makes no claim about human labels; every unit is
located in the answer by the aligner and lands on the claim it states; near-miss evidence quotes no
longer fail the in-house check while invented ones still do; every divergence reason is true to the
verdicts in the store.

The judge never reads annotations, and its replies depend only on the prompts, so the unannotated
run's units are what an annotated run would get: the test reads the canonical annotations (the judge
does not) to know which claim each unit states.
"""
from __future__ import annotations

import json
import os
import re

from harness.cases.load import case_to_json, load_cases
from harness.core.spans import overlaps

import pytest

from tests.conftest import CANONICAL
from tests.helpers.judges import text as T
from tests.helpers.judges.fixtures import realistic_judge  # noqa: F401 - fixture

LOCATED_ON_STATED_MIN = 0.90
"""Issue 11: at least 90% of paraphrased units land on the claim they state."""


@pytest.fixture(scope="module")
def bare_run(tmp_path_factory, realistic_judge):  # noqa: F811 - the fixture
    """``harness run`` on the canonical cases with their annotations removed, every metric, the
    realistic judge at a URL; (run dir, exit code, stdout)."""
    from harness.console import main

    d = tmp_path_factory.mktemp("bare")
    cases = str(d / "bare.jsonl")
    with open(cases, "w", encoding="utf-8") as fh:
        for c in load_cases(CANONICAL):
            obj = case_to_json(c)
            obj.pop("annotation")
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["run", "--cases", cases, "--judge-url", realistic_judge.url, "--judge-model", "realistic-judge",
                   "--out", str(d / "out"), "--run-id", "bare", "--no-progress", "--cache", "live"])
    return str(d / "out" / "bare"), rc, buf.getvalue()


@pytest.fixture(scope="module")
def store_units(bare_run):
    from harness.store.runstore import RunStore

    s = RunStore.open(os.path.join(bare_run[0], "store.sqlite"))
    try:
        return s.units(), s.cells()
    finally:
        s.close()


@pytest.fixture(scope="module")
def canonical_cases():
    return load_cases(CANONICAL)


def test_unannotated_copy_runs_end_to_end_and_writes_a_report(bare_run):
    run_dir, rc, out = bare_run
    assert rc in (0, 1), out                        # 1: some cells errored (each with its reason)
    assert "judge: realistic-judge at http://127.0.0.1:" in out
    html = open(os.path.join(run_dir, "index.html"), encoding="utf-8").read()
    md = open(os.path.join(run_dir, "report.md"), encoding="utf-8").read()
    # the run's own sections, not the committed metric cards the page also carries (they describe the
    # canonical reference run, labels and all)
    own = re.sub(r'<section id="cards">.*?</section>', "", html, flags=re.S)
    assert "Human label" not in own + md and "annotation-driven" not in own + md
    assert "<th>annotation</th>" not in own and "| annotation |" not in md
    assert "answer sentence" in html                # the alignment rows are the answer's sentences


def _paraphrased(units, cases):
    """(case, unit row) for every located-or-not unit whose text is not a verbatim slice of the answer."""
    for u in units.itertuples(index=False):
        if u.kind in ("answer", "judge"):
            continue
        case = cases.by_id(u.case_id)
        if not case.annotation.claims or not str(u.text).strip() or str(u.text).strip() in case.answer:
            continue
        yield case, u


def _stated(case, text: str) -> set[int]:
    """The annotated claims a unit states, read with the judge's own word sense (stems and synonyms):
    those at least half of whose content words it carries, else the one it shares most with."""
    mine = T.content(text)
    shares = []
    for i, c in enumerate(case.annotation.claims):
        theirs = T.content(case.answer[c.answer_span[0]:c.answer_span[1]])
        shares.append((len(mine & theirs) / max(1, len(theirs)), i))
    got = {i for s, i in shares if s >= 0.5}
    best = max(shares)
    return got or ({best[1]} if best[0] > 0 else set())


def _span(u):
    return None if u.span_start is None or u.span_start != u.span_start else (int(u.span_start), int(u.span_end))


def test_paraphrased_units_land_on_the_claim_they_state(store_units, canonical_cases):
    from harness.reports.analysis.alignment import Row, lands_on

    units, _ = store_units
    n = located = on_stated = 0
    methods: dict[str, int] = {}
    for case, u in _paraphrased(units, canonical_cases):
        n += 1
        loc = json.loads(u.detail)["location"]
        methods[loc["method"]] = methods.get(loc["method"], 0) + 1
        span = _span(u)
        assert (span is None) == (loc["method"] == "not_located")
        if span is None:
            continue
        located += 1
        rows = [Row("claim", "", c.answer_span, c.label, c) for c in case.annotation.claims]
        hit = {rows.index(r) for r in lands_on(span, rows)}
        assert all(overlaps(rows[i].span, span) for i in hit)   # never on a claim it does not overlap
        on_stated += bool(hit) and hit <= _stated(case, str(u.text))
    print(f"\nparaphrased units: {n}; located {located}; on the claim(s) they state {on_stated} "
          f"({on_stated / n:.0%}); methods {methods}")
    assert n >= 20 and methods.get("fuzzy", 0) >= 10
    assert on_stated / n >= LOCATED_ON_STATED_MIN


def test_every_unit_carries_its_location(store_units):
    units, _ = store_units
    for u in units.itertuples(index=False):
        loc = json.loads(u.detail)["location"]
        assert loc["method"] in ("claim", "exact", "normalised", "fuzzy", "not_located")
        assert loc["method"] != "claim"            # no annotation: no annotated claim to borrow a span from


def _quote_kind(q: dict, unit_text: str) -> str:
    """How the realistic judge made a quote: ``invented`` (the claim's own words) or ``near-miss``
    (a passage clause with a comma, a stop or an ellipsis changed), for a quote not found verbatim."""
    own = T.strip_markers(unit_text).rstrip(".")
    return "invented" if q["text"] == own else "near-miss"


def test_near_miss_quotes_no_longer_fail_and_invented_ones_still_do(store_units, canonical_cases):
    from harness.adapters.inhouse.quotes import locate_quote
    from harness.core.aligner import fold

    units, _ = store_units
    counts = {"exact": 0, "near-miss located": 0, "near-miss failed": 0, "invented located": 0, "invented failed": 0}
    strict_grounded = grounded = 0
    for u in units[units.metric == "inhouse.span"].itertuples(index=False):
        case = canonical_cases.by_id(u.case_id)
        quotes = json.loads(u.quotes) if isinstance(u.quotes, str) else u.quotes
        checked = [q for q in quotes if q.get("verbatim") is not None]
        for q in checked:
            if q["match"] == "exact":
                counts["exact"] += 1
                continue
            kind = _quote_kind(q, str(u.text))
            counts[f"{kind} {'located' if q['match'] == 'near' else 'failed'}"] += 1
            if q["match"] == "near":   # a near match changes no word: the folded pieces are the passage's words
                text = case.context(q["context_id"]).text
                assert fold(q["text"].replace("...", " "))[0] == fold(re.sub(r"\s+", " ", text[q["start"]:q["end"]]))[0] \
                    or "..." in q["text"]
        detail = json.loads(u.detail)
        grounded += detail["grounded"]
        if detail["grounded"]:
            strict_grounded += all(locate_quote(q["text"], case.context(q["context_id"]).text, strict=True)
                                   for q in checked)
    print(f"\nin-house quotes: {counts}; grounded claims {grounded}, of which strict (v1) would keep {strict_grounded}")
    assert counts["near-miss located"] >= 10 and counts["near-miss failed"] == 0
    assert counts["invented failed"] >= 1 and counts["invented located"] == 0
    assert strict_grounded < grounded


def test_every_divergence_reason_is_true_to_the_stored_verdicts(bare_run, store_units):
    from harness.reports.analysis.reasons import KINDS, case_reason
    from harness.reports.build import build

    units, cells = store_units
    built = build(bare_run[0], os.path.join(bare_run[0], "rebuilt"))
    rep = built.report
    names = {m: rep.data.info[m].display_name for m in rep.data.metrics}
    checked = 0
    for dv in rep.divergences:
        mine = cells[cells["case_id"] == dv.case_id]
        flags = {m: tuple(json.loads(f)) for m, f in zip(mine["metric"], mine["flags"])}
        why = case_reason(dv.rows, (dv.low[0], dv.high[0]), dv.scores, names, flags, facts=rep.data.info)
        assert (why.kind, why.text) == (dv.rule, dv.reason)
        assert dv.rule in KINDS or dv.rule == "unexplained"
        assert "Human label" not in dv.reason
        row = dv.rows[why.row] if why.row is not None else None
        for metric, raws in why.cited.items():   # each verdict quoted is in the store, on that row
            mine = units[(units.case_id == dv.case_id) & (units.metric == metric)]
            on_row = {str(u.raw_verdict) for u in mine.itertuples(index=False)
                      if row is None or u.kind in ("answer", "judge")
                      or (_span(u) is not None and overlaps(_span(u), row.span))}
            assert set(raws) <= on_row, (dv.case_id, metric, raws, on_row)
            checked += 1
        if dv.rule == "judgement":   # both judged the row, and the lower metric credited it less
            from harness.reports.analysis.reasons import credit

            f = rep.data.info
            low = credit(row, dv.low[0], f)
            assert low is not None and low < (credit(row, dv.high[0], f) or 1.0)
        if "judge also said supported" in dv.reason:
            assert any(r.startswith("supported (") for r in why.cited[dv.low[0]])
    print(f"\ndivergences: {len(rep.divergences)}; kinds {sorted({d.rule for d in rep.divergences})}; "
          f"cited verdicts checked against the store: {checked}")
    assert len(rep.divergences) >= 3 and checked >= len(rep.divergences)
