"""Every registered metric under injected judge faults: no cell lost, no score silently changed, every
upstream attempt in the ledger.

One fault-free run and one run with every fault kind mixed in (seeded, so a failure replays) over
the canonical cases and every metric. Each faulted cell must be one of:

- the same as the fault-free cell (the gateway's retries absorbed the faults);
- an error with a reason (never a 0, never missing);
- unscored (by the vendor or the harness) with a reason: the vendor's own handling of a judge that
  kept failing, e.g. Ragas ResponseGroundedness gives NaN after 5 failed tries per judge;
- scored differently, but carrying a flag the fault-free cell does not have, e.g. TruLens's
  ``trivial_filter_unparsed_all_kept`` when a corrupted text-mode reply made it keep every sentence.

Anything else (a different score with no flag) is a fault silently turned into a result: a failure.
"""
import math
import re
from collections import Counter

from harness.judge.faults import KINDS, FaultInjector, FaultSpec
from harness.metric import registry
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

JUDGELESS = ("baseline.similarity",)
"""Metrics that send the judge nothing (only embeddings requests, which take transport faults only)."""
MAY_SKIP_JUDGE = ("baseline.similarity", "cascade.similarity_span")
"""Metrics that can score an answer without a judge call (every sentence approved by similarity)."""
SPEC = "500=0.05,429=0.05,timeout=0.05,malformed=0.07,truncated=0.07,schema=0.07,retry_after=0.01"
SEED = 11


def _cells(path):
    s = RunStore.open(path)
    try:
        cells = {(r[0], r[1]): r[2:] for r in s.rows(
            "SELECT case_id, metric, status, score, reason, flags, calls, retries, errors FROM cells")}
        # every attempt, embedding requests included: the fault injector wraps the embedding model too
        attempts = s.rows("SELECT metric, SUM(attempts), SUM(attempts - 1), COUNT(*) FROM calls GROUP BY metric")
    finally:
        s.close()
    return cells, {m: (a, r, n) for m, a, r, n in attempts}


def _chat_calls(path):
    s = RunStore.open(path)
    try:
        return {(c, m): n for c, m, n in s.rows(
            "SELECT case_id, metric, COUNT(*) FROM calls WHERE step != 'embeddings' GROUP BY case_id, metric")}
    finally:
        s.close()


@pytest.fixture(scope="module")
def runs(canonical, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("vendor-faults"))
    metrics = registry.names()
    base = run(RunOptions(cases=canonical, metrics=metrics, out_dir=out, run_id="base", progress=False))
    inj = FaultInjector(FaultSpec.parse(SPEC), seed=SEED)
    faulted = run(RunOptions(cases=canonical, metrics=metrics, out_dir=out, run_id="faulted", progress=False,
                             upstream_wrapper=inj, call_timeout_s=0.3, retry_base_delay_s=0.001))
    return metrics, _cells(base.store_path), _cells(faulted.store_path), inj, out


def _same(a, b):
    return a[0] == b[0] and (a[1] == b[1] or (a[1] is not None and b[1] is not None and math.isclose(a[1], b[1])))


def test_no_cell_is_lost(runs, canonical):
    metrics, (base, _), (faulted, _), *_ = runs
    want = {(c.id, m) for c in canonical for m in metrics}
    assert set(base) == want and set(faulted) == want


def test_no_fault_silently_changes_a_score(runs):
    import json

    metrics, (base, _), (faulted, _), *_ = runs
    outcome, silent = Counter(), []
    for key, f in faulted.items():
        b = base[key]
        status, score, reason, flags = f[0], f[1], f[2], set(json.loads(f[3]))
        if _same(b, f):
            outcome["same"] += 1
        elif status == "error":
            assert reason and score is None, key
            outcome["error"] += 1
        elif status in ("vendor_nan", "unscored"):
            assert reason, key
            outcome[status] += 1
        elif status == "scored" and flags - set(json.loads(b[3])):
            outcome["scored, flagged"] += 1
        else:
            silent.append((key, b[:2], f[:3]))
    print(f"faulted cells vs fault-free (seed {SEED}): {dict(outcome)}")
    assert silent == []
    assert outcome["same"] > len(faulted) // 2        # the retries absorb most faults


def test_the_same_seed_faults_the_same_calls_whatever_the_concurrency(runs, canonical):
    """Replay: a second run with the same seed at another concurrency (another run id, other timing)
    makes the same fault decision for every attempt both runs made, ends every cell the same way, and,
    for every cell that did not error, makes exactly the same attempts. (When a cell errors, a vendor
    running steps concurrently may or may not have sent a sibling request before the cell closed.)"""
    metrics, _, (faulted, _), inj, out = runs
    again = FaultInjector(FaultSpec.parse(SPEC), seed=SEED)
    rerun = run(RunOptions(cases=canonical, metrics=metrics, out_dir=out, run_id="replay", progress=False,
                           upstream_wrapper=again, call_timeout_s=0.3, retry_base_delay_s=0.001, concurrency=3))
    replayed, _ = _cells(rerun.store_path)
    assert {k: v[:2] for k, v in replayed.items()} == {k: v[:2] for k, v in faulted.items()}

    def by_cell(events):
        cells = {}
        for e in events:
            cells.setdefault((e.case, e.metric), Counter())[(e.key, e.occurrence, e.attempt, e.kind)] += 1
        return cells

    first, second = by_cell(inj.events), by_cell(again.events)
    decided = {}
    for cell in set(first) | set(second):
        for (key, occ, attempt, kind) in first.get(cell, Counter()) + second.get(cell, Counter()):
            decided.setdefault((cell, key, occ, attempt), set()).add(kind)
    assert all(len(kinds) == 1 for kinds in decided.values())
    for cell, v in faulted.items():
        if v[0] != "error":
            assert first.get(cell) == second.get(cell), cell
            assert replayed[cell][:2] == v[:2], cell
            # the reason lists a cell's failed calls in the order they ended (concurrent steps): the same set
            def parts(reason):
                return sorted(re.split(r"; (?=a judge call failed)|: (?=a judge call failed)", reason or ""))

            assert parts(replayed[cell][2]) == parts(v[2]), cell


def test_every_upstream_attempt_is_in_the_ledger(runs):
    """Stored attempts (calls rows) add up to what the injector saw, metric by metric; the cells'
    ledgers agree with their call rows."""
    metrics, _, (faulted, attempts), inj, _ = runs
    seen = Counter(e.metric for e in inj.events)
    for m in metrics:
        stored, retries, n_calls = attempts.get(m, (0, 0, 0))
        assert stored == seen[m], (m, stored, seen[m])
        cells = [v for (c, mm), v in faulted.items() if mm == m]
        assert sum(v[4] for v in cells) == n_calls and sum(v[5] for v in cells) == retries, m


MIN_ATTEMPTS_FOR_EVERY_KIND = 50


def test_every_fault_kind_hit_every_vendor(runs):
    """Each vendor's code met every kind of fault (per vendor: a single metric can make too few calls
    to see every kind, e.g. trulens.citation makes 2 in the whole set)."""
    metrics, _, _, inj, _ = runs
    by_vendor = {}
    for e in inj.faulted():
        by_vendor.setdefault(registry.get(e.metric).vendor, Counter())[e.kind] += 1
    print(f"faults injected per vendor (seed {SEED}): {by_vendor}")
    attempts = Counter(registry.get(e.metric).vendor for e in inj.events)
    # a vendor whose metrics call the judge once an answer (phoenix: 24 calls in the set) meets ~0.5 of each
    # kind at these rates: it is held to every kind only once it made enough attempts to expect each
    for vendor in {registry.get(m).vendor for m in metrics if m not in JUDGELESS}:
        if attempts[vendor] < MIN_ATTEMPTS_FOR_EVERY_KIND:
            print(f"{vendor}: {attempts[vendor]} attempts, too few to expect every fault kind")
            continue
        assert set(by_vendor.get(vendor, {})) == set(KINDS), (vendor, by_vendor.get(vendor))


def test_counts_lines_add_up(runs, canonical):
    from harness.store.table import counts_lines

    metrics, _, (faulted, _), *_ = runs
    counts = {}
    for (c, m), v in faulted.items():
        counts.setdefault(m, Counter())[v[0]] += 1
    lines = counts_lines(counts, metrics)
    assert len(lines) == len(metrics)
    for m, line in zip(metrics, lines):
        c = counts[m]
        assert line.split() == [m, "scored", f"{c['scored']},", "unscored", f"{c['unscored']},", "unscored", "by",
                                "the", "vendor", f"{c['vendor_nan']},", "not", "applicable",
                                f"{c['not_applicable']},", "errored", str(c["error"])], line
        assert sum(c.values()) == len(canonical)


def test_a_judge_that_always_fails(canonical, tmp_path):
    """Every attempt fails: every cell ends as an error with the judge's reason (or the vendor's own
    'unscored' with it), none is scored, and every attempt, including those of a step still in flight
    when the vendor gave up (DeepEval sends two steps at once), is in the ledger."""
    from harness.cases.load import CaseSet

    cases = CaseSet(canonical.path, tuple(canonical.by_id(c) for c in ("cookie-yield", "citations-correct",
                                                                       "abstain-answerable")), canonical.sha256)
    metrics = registry.names()
    inj = FaultInjector(FaultSpec.parse("500=1"), seed=0)
    out = run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="down", progress=False,
                         upstream_wrapper=inj, retry_attempts=2, retry_base_delay_s=0.05))
    cells, attempts = _cells(out.store_path)
    assert len(cells) == len(cases) * len(metrics)
    chat = _chat_calls(out.store_path)
    for key, (status, score, reason, *_rest) in cells.items():
        if key[1] in MAY_SKIP_JUDGE and status == "scored":
            assert chat.get(key, 0) == 0, key      # scored only because no judge call was needed
            continue
        assert score is None, key
        if status == "not_applicable":          # e.g. trulens.citation on an answer without [N] markers
            continue
        assert status in ("error", "vendor_nan"), key
        assert "injected fault: judge HTTP 500" in reason, (key, reason)
    seen = Counter(e.metric for e in inj.events)
    assert {m: a[0] for m, a in attempts.items()} == dict(seen)   # embedding attempts too: they are faulted
    assert all(e.kind == "500" for e in inj.events)


class _TextModeOnly:
    """Faults only the requests that ask for no output format (TruLens's trivial-statement filter is the only
    text-mode request any metric sends; everything else asks for json_schema or json_object, on chat
    completions as ``response_format`` or on the Responses API as ``text.format``)."""

    def __init__(self, kind):
        from harness.judge.faults import FaultyUpstream

        self.kind_ = kind
        self.make = lambda inner: FaultyUpstream(inner, FaultSpec.parse(f"{kind}=1"), 0)

    def __call__(self, inner):
        faulty = self.make(inner)

        class Wrapper:
            kind, model = inner.kind, inner.model

            def scope(self, cell):
                return inner.scope(cell)

            async def complete(self, cell, body):
                asked = body.get("response_format") or (body.get("text") or {}).get("format")
                target = faulty if not asked else inner
                return await target.complete(cell, body)

            async def aclose(self):
                await inner.aclose()

        return Wrapper()


@pytest.mark.parametrize("kind", ["malformed", "truncated", "schema"])
def test_a_corrupted_text_mode_reply_reaches_trulens_and_is_flagged(kind, canonical, tmp_path):
    """The gateway cannot check a text-mode reply, so TruLens's own handling applies: its filter keeps
    every sentence; the adapter flags the cell ``trivial_filter_unparsed_all_kept``. Where the filter
    would have dropped a sentence (the greeting of ``trivial-greeting``), the reference judge has no
    label for it and the cell errors, naming the sentence; a real judge would score it, flagged."""
    import json

    metrics = [m for m in ("trulens.groundedness", "trulens.groundedness_answerability") if m in registry.names()]
    if not metrics:
        pytest.skip("no trulens.* metric registered")
    from harness.cases.load import CaseSet

    cases = CaseSet(canonical.path, tuple(canonical.by_id(c) for c in ("cookie-yield", "trivial-greeting")),
                    canonical.sha256)
    base, _ = _cells(run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="b",
                                    progress=False)).store_path)
    got, _ = _cells(run(RunOptions(cases=cases, metrics=metrics, out_dir=str(tmp_path), run_id="f", progress=False,
                                   upstream_wrapper=_TextModeOnly(kind))).store_path)
    for m in metrics:
        same, greeting = got[("cookie-yield", m)], got[("trivial-greeting", m)]
        assert _same(base[("cookie-yield", m)], same)
        assert "trivial_filter_unparsed_all_kept" in json.loads(same[3])
        assert greeting[0] == "error" and "the sentence carries no annotated claim" in greeting[2], greeting
