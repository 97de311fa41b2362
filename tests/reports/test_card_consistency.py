"""Cards never contradict their own figures: every yes/no behaviour answer on a card agrees with the value shown
beside it (read in the metric's own range and direction), and the citation answer agrees with the metric's own
units: a metric "notices a misattributed citation" only when the unit on that claim is not supported (the
similarity baseline passes the misattributed sentence and fails the correctly cited one: its 0.50 is not noticing).
"""
from __future__ import annotations

import glob
import json
import os

from harness.metric import registry
from harness.metric.facts import MetricFacts
from harness.reports.analysis.behaviours import BY_KEY, answers, by_units
from harness.reports.analysis.data import load_run
from harness.reports.analysis.matrix import build
from harness.reports.analysis.orient import unit
from harness.run.runner import RunOptions, run

import pytest

from tests.conftest import ROOT

FACTS = sorted(glob.glob(os.path.join(ROOT, "reports", "cards", "*.facts.json")))


def _number(value: str) -> float | None:
    try:
        return float(value.rstrip("*"))
    except (AttributeError, ValueError):
        return None


@pytest.mark.parametrize("path", FACTS, ids=[os.path.basename(p).split(".facts")[0] for p in FACTS])
def test_every_answer_agrees_with_the_value_beside_it(path):
    doc = json.load(open(path, encoding="utf-8"))
    metric = doc["metric"]
    span = MetricFacts.of(registry.declared(metric)).scale   # the card's metric may install alone
    checked = 0
    for key, fact in doc["facts"].items():
        probe, v = BY_KEY.get(key), _number(fact["value"])
        if probe is None or v is None or fact["answer"] not in ("yes", "no", "partly"):
            continue
        from_score = probe.answer(unit(span, v))
        if probe.by_units:   # the metric's units decide; a score can fall for another reason, never rise with it
            if fact["answer"] == "yes":
                assert from_score == "yes", f"{metric} {key}: noticed, yet the value {fact['value']} is not lowered"
        else:
            assert fact["answer"] == from_score, f"{metric} {key}: card says {fact['answer']} beside {fact['value']}"
        checked += 1
    assert checked >= 1, metric


@pytest.fixture(scope="module")
def span_and_similarity(canonical, tmp_path_factory):
    out = run(RunOptions(cases=canonical, metrics=["inhouse.span", "baseline.similarity"],
                         out_dir=str(tmp_path_factory.mktemp("cc")), run_id="cc", progress=False))
    return load_run(out.run_dir)


def test_the_citation_answer_is_the_units_answer(span_and_similarity):
    data = span_and_similarity
    cells = build(data)
    case = next(c for c in data.cases.values() if BY_KEY["checks-citation"].matches(c))
    got = {m: {a.probe.key: a.answer for a in answers(cells, m, [case], data.units, span=data.info[m].scale)}
           for m in data.metrics}
    # similarity: the misattributed sentence passes (its unit is supported), so it does not notice, 0.50 or not
    assert by_units(BY_KEY["checks-citation"], case, "baseline.similarity", data.units) == "no"
    assert got["baseline.similarity"]["checks-citation"] == "no"
    assert cells[(case.id, "baseline.similarity")].score < 1   # ... although its score fell (the other sentence)
    for m in data.metrics:   # and the card in reports/cards says the same as this run
        card = json.load(open(os.path.join(ROOT, "reports", "cards", f"{m}.facts.json")))["facts"]
        assert card["checks-citation"]["answer"] == got[m]["checks-citation"], m
