"""A metric added from a folder outside the repository, with exactly the files docs/development.md's "Adding a
metric" lists (its module, its reference-judge handler, its golden table, its card text, one entry
point), runs through ``harness run``, ``harness report`` and ``harness cards``, and the golden
machinery finds its table, with no file of the repository touched."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import CANONICAL, ROOT

NAME = "toy.supported_share"

MODULE = '''
"""A toy metric: the share of an answer's claims the judge counts as supported."""
import json

from harness.metric.protocol import LabelReading, register
from harness.core.records import CellResult, UnitVerdict

SCHEMA = {"name": "ToyCount", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["supported", "claims"],
    "properties": {"supported": {"type": "integer"}, "claims": {"type": "integer"}}}}


@register
class ToySupportedShare:
    name = "toy.supported_share"
    version = "1"
    display_name = "Toy supported share"
    short_name = "toy.share"
    order = 99
    higher_is_better = True
    vendor = "toy"
    unit = "answer"
    definition = "The share of the answer's claims that the judge counts as supported."
    card_notes = "A toy, for the test that adds a metric from a folder."
    label_reading = LabelReading({"supported": "counted", "inference": "counted", "not_found": "not counted",
                                  "contradicted": "not counted"}, "counts as supported")
    judge = "toy_metric.judge:reply"

    async def score(self, case, endpoint):
        client = endpoint.async_openai()
        r = await client.chat.completions.create(
            model=endpoint.model, temperature=0,
            messages=[{"role": "user", "content": "Count the supported claims.\\nANSWER: " + case.answer}],
            response_format={"type": "json_schema", "json_schema": SCHEMA})
        got = json.loads(r.choices[0].message.content)
        if not got["claims"]:
            return CellResult.unscored("no claims")
        unit = UnitVerdict(0, case.answer, "supported" if got["supported"] == got["claims"] else "ambiguous",
                           f"{got['supported']}/{got['claims']}", "answer", span=(0, len(case.answer)))
        return CellResult.scored(got["supported"] / got["claims"], (unit,))
'''

JUDGE = '''
"""The reference judge's handler for toy.supported_share: counts from the labels."""
import json

from harness.core.errors import UnrecognisedRequest

from toy_metric.metric import ToySupportedShare


def reply(req):
    if req.schema_name != "ToyCount":
        raise UnrecognisedRequest(req.metric, "not a ToyCount request", req.prompt)
    claims = req.case.judged_claims()
    k = sum(ToySupportedShare.label_reading[c.label] == "counted" for c in claims)
    return json.dumps({"supported": k, "claims": len(claims)})
'''

CARD_TEXT = """## Description

The toy metric counts the claims a judge calls supported, and divides by the claims.

## Limitations and Bias

It is a toy.
"""


def expected(case) -> tuple[str, str]:
    claims = case.judged_claims()
    if not claims:
        return "unscored", "no claims: unscored"
    k = sum(c.label in ("supported", "inference") for c in claims)
    return repr(k / len(claims)), f"{k} of {len(claims)} claims are supported or inference"


@pytest.fixture()
def toy(tmp_path, canonical):
    """The toy distribution on sys.path, registered through its entry point; removed afterwards."""
    from harness.metric import registry

    root = tmp_path / "site"
    pkg = root / "toy_metric"
    (pkg / "golden").mkdir(parents=True)
    (pkg / "card_text").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "metric.py").write_text(textwrap.dedent(MODULE))
    (pkg / "judge.py").write_text(textwrap.dedent(JUDGE))
    rows = ["case_id,expected,reasoning"] + [f"{c.id},{','.join(expected(c))}" for c in canonical]
    (pkg / "golden" / f"{NAME}.csv").write_text("\n".join(rows) + "\n")
    (pkg / "card_text" / f"{NAME}.md").write_text(CARD_TEXT)
    info = root / "toy_metric-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-metric\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[groundedness_harness.metrics]\n{NAME} = toy_metric.metric:ToySupportedShare\n")
    sys.path.insert(0, str(root))
    registry.refresh()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for mod in [m for m in sys.modules if m == "toy_metric" or m.startswith("toy_metric.")]:
            del sys.modules[mod]
        registry.refresh()


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout


def test_a_metric_from_a_folder_runs_through_run_report_and_cards(toy, tmp_path, capsys):
    from harness.console import main
    from harness.metric import registry

    from tests.helpers.goldens import canonical_results, golden, mismatch

    before = _status()
    assert NAME in registry.names() and registry.names()[-1] == NAME   # order 99: last
    out = tmp_path / "out"
    assert main(["run", "--cases", CANONICAL, "--metrics", f"inhouse.span,{NAME}", "--out", str(out),
                 "--run-id", "toy", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "toy.share" in printed.splitlines()[1]          # the table's header row, short name from the class
    assert "cookie-yield" in printed and "0.75" in printed
    run_dir = out / "toy"
    html = (run_dir / "index.html").read_text()
    assert "toy.share" in html and "Toy supported share" in html

    assert main(["report", str(run_dir), "--report-dir", str(tmp_path / "rep")]) == 0
    assert "toy.share" in (tmp_path / "rep" / "report.md").read_text()

    cards = tmp_path / "cards"
    assert main(["cards", "--from-run", str(run_dir), "--cards-dir", str(cards)]) == 0
    card = (cards / f"{NAME}.md").read_text()
    assert "# Toy supported share" in card
    assert "counts the claims a judge calls supported" in card           # its card_text
    assert "toy_metric/card_text/toy.supported_share.md" in card          # named, relative
    assert "counts as supported" in card and "not counted" in card        # its label reading
    assert "A toy, for the test that adds a metric from a folder." in card  # its card notes

    rows = golden(NAME)                                                    # found through the class
    results = canonical_results(NAME)
    assert set(rows) == set(results)
    wrong = [w for cid, row in rows.items() if (w := mismatch(results[cid].result, row))]
    assert not wrong, wrong
    assert _status() == before, "adding a metric from a folder touched files of the repository"


def test_a_registered_metric_without_a_golden_table_fails(toy):
    from tests.helpers.goldens import golden

    (toy / "toy_metric" / "golden" / f"{NAME}.csv").unlink()
    with pytest.raises(AssertionError, match="has no golden table"):
        golden(NAME)
