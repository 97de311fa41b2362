"""A vendor added by one folder: a fake vendor library and its adapter folder, made in a temporary directory with
exactly what docs/development.md's "Adding a vendor" lists (the metric module, its reference-judge handler, its
switches, its test kit: the realistic judge's handler, a parity rule, a stock-usage script, an offline test; one
entry point), and nothing of the repository touched. Each piece is found where the built-in vendors' are:

- the registry lists the metric, and ``harness run`` scores it through the reference judge;
- the vendor's switch is forced by :mod:`harness.metric.vendor_env` (the fake library refuses to score without it);
- the realistic test judge answers its prompts (its books count the vendor's step, nothing unrecognised);
- the strict stock-parity machinery finds its stock script, runs it with its switches, and the vendor's own usage
  scores what the harness scores against the same judge;
- its parity rule is among the collected rules;
- its offline test runs under pytest with the repository's test helpers.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import CANONICAL, ROOT

NAME = "toyvendor.grounded"
SWITCH = "TOYVENDOR_TELEMETRY"

LIBRARY = '''
"""toyvendorlib: a fake vendor library. It asks a chat model how many of an answer's sentences the context grounds,
and, like a real vendor, phones home unless its telemetry switch is off (here: it refuses to score)."""
import json
import os

PROMPT = "TOYVENDOR GROUNDEDNESS CHECK. Count the answer's sentences the context supports."


async def ascore(client, model, answer, contexts):
    """The share of the answer's sentences the judge finds grounded (ValueError on an empty answer)."""
    if os.environ.get("TOYVENDOR_TELEMETRY") != "off":
        raise RuntimeError("toyvendorlib would phone home: set TOYVENDOR_TELEMETRY=off")
    if not answer.strip():
        raise ValueError("toyvendorlib: the answer is empty")
    r = await client.chat.completions.create(model=model, temperature=0, messages=[
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "CONTEXT:\\n" + "\\n\\n".join(contexts) + "\\n\\nANSWER:\\n" + answer}])
    text = r.choices[0].message.content.strip().removeprefix("```json").removesuffix("```")
    got = json.loads(text[text.index("{"):])
    return got["grounded"] / got["sentences"] if got["sentences"] else 0.0
'''

METRIC = '''
"""toyvendor.grounded: toyvendorlib's grounded share (the vendor imported inside score only)."""
from harness.core.records import CellResult, UnitVerdict
from harness.metric.protocol import LabelReading, register


@register
class ToyGrounded:
    name = "toyvendor.grounded"
    version = "1"
    display_name = "Toy vendor grounded share"
    short_name = "toyv.grounded"
    order = 98
    higher_is_better = True
    vendor = "toyvendor"
    vendor_package = "toyvendorlib"
    unit = "answer"
    definition = "The share of the answer's sentences the judge finds grounded in the context."
    label_reading = LabelReading({"supported": "grounded", "inference": "grounded", "not_found": "not grounded",
                                  "contradicted": "not grounded"}, "grounded sentence")
    judge = "toy_vendor.judge:reply"
    requires = ("toyvendorlib",)

    async def score(self, case, endpoint):
        import toyvendorlib

        if not case.answer.strip():
            return CellResult.unscored("empty answer")
        value = await toyvendorlib.ascore(endpoint.async_openai(), endpoint.model, case.answer, list(case.context_texts))
        unit = UnitVerdict(0, case.answer, "supported" if value == 1 else "ambiguous", f"{value:.3f}", "answer",
                           span=(0, len(case.answer)))
        return CellResult.scored(value, (unit,))
'''

JUDGE = '''
"""The reference judge's handler for toyvendor.grounded: counts from the labels."""
import json

from harness.core.errors import UnrecognisedRequest

from toy_vendor.grounded import ToyGrounded


def reply(req):
    if "TOYVENDOR GROUNDEDNESS CHECK" not in req.prompt:
        raise UnrecognisedRequest(req.metric, "not a toyvendor request", req.prompt)
    claims = req.case.judged_claims()
    k = sum(ToyGrounded.label_reading[c.label] == "grounded" for c in claims)
    return json.dumps({"grounded": k, "sentences": len(claims)})
'''

SWITCHES = '''
"""toyvendorlib's switch, forced before any vendor import."""
SWITCHES = {"TOYVENDOR_TELEMETRY": "off"}
'''

KIT_REALISTIC = '''
"""The realistic judge's answer to toyvendorlib's prompt: its own sentences of the answer, rated by word overlap."""
import random

from tests.helpers.judges import text as T
from tests.helpers.judges.steps import Answer

ORDER = 5


def answer(messages, rng: random.Random, quotes: random.Random):
    system = next((t for r, t in messages if r == "system"), "")
    user = next((t for r, t in messages if r == "user"), "")
    if not system.startswith("TOYVENDOR GROUNDEDNESS CHECK") or "\\n\\nANSWER:\\n" not in user:
        return None
    context, _, text = user.removeprefix("CONTEXT:\\n").rpartition("\\n\\nANSWER:\\n")
    rated = T.rated(text, context, rng)
    return Answer("toyvendor.grounded", {"grounded": sum(label == "supported" for _, label in rated),
                                         "sentences": len(rated)})
'''

KIT_PARITY = '''
"""toyvendor's allowed difference: stock raises on an empty answer, the harness keeps it unscored."""
from tests.helpers.judges.realistic import SERVER_MODES
from tests.helpers.parity import Allowed, only_the_answer_empty

RULES = (Allowed("empty answer (toyvendor)", ("toyvendor.grounded",), SERVER_MODES, "ValueError", "unscored",
                 "toyvendorlib raises on an empty answer; the adapter keeps it unscored", when=only_the_answer_empty,
                 stock_says="the answer is empty"),)
'''

KIT_STOCK = '''
"""toyvendorlib's documented usage, pointed at a judge's base URL (run by tests/helpers/stock_common.py)."""
MODULE = "toyvendorlib"
METRICS = ("toyvendor.grounded",)


def score(url, model, cases):
    import openai
    import toyvendorlib
    from stock_common import KEY, gather, outcome

    client = openai.AsyncOpenAI(base_url=url, api_key=KEY, max_retries=0)
    got = gather([toyvendorlib.ascore(client, model, c["answer"], c["contexts"]) for c in cases])
    return {"toyvendor.grounded": {c["id"]: outcome(r) for c, r in zip(cases, got)}}
'''

KIT_TEST = '''
"""toyvendor's offline test, beside its adapter: the metric's class is what the registry lists."""
from harness.metric import registry

from tests.helpers.judges.realistic import RealisticJudge


def test_the_vendor_is_registered_and_the_realistic_judge_has_its_handler():
    assert registry.get("toyvendor.grounded").vendor == "toyvendor"
    assert any(h.__name__ == "toy_vendor.kit.realistic" for h in RealisticJudge().handlers)
'''


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout


@pytest.fixture()
def toy(tmp_path):
    """The fake vendor library and the vendor's folder on sys.path, registered through one entry point."""
    from harness.metric import registry

    root = tmp_path / "site"
    files = {"toyvendorlib/__init__.py": LIBRARY, "toy_vendor/__init__.py": "", "toy_vendor/grounded.py": METRIC,
             "toy_vendor/judge.py": JUDGE, "toy_vendor/switches.py": SWITCHES, "toy_vendor/kit/__init__.py": "",
             "toy_vendor/kit/realistic.py": KIT_REALISTIC, "toy_vendor/kit/parity.py": KIT_PARITY,
             "toy_vendor/kit/stock.py": KIT_STOCK, "toy_vendor/kit/test_offline.py": KIT_TEST,
             "toy_vendor-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: toy-vendor\nVersion: 0.1\n",
             "toy_vendor-0.1.dist-info/entry_points.txt":
                 f"[groundedness_harness.metrics]\n{NAME} = toy_vendor.grounded:ToyGrounded\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(root))
    registry.refresh()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for mod in [m for m in sys.modules if m.split(".")[0] in ("toy_vendor", "toyvendorlib")]:
            del sys.modules[mod]
        os.environ.pop(SWITCH, None)
        registry.refresh()


def _cells(run_dir) -> dict:
    from harness.store.runstore import RunStore

    store = RunStore.open(str(run_dir / "store.sqlite"))
    try:
        return {r[0]: (r[1], r[2]) for r in store.rows(f"SELECT case_id, status, score FROM cells WHERE metric = '{NAME}'")}
    finally:
        store.close()


def test_a_vendor_added_by_one_folder_is_found_everywhere(toy, tmp_path, capsys):
    from harness.cases.load import load_cases
    from harness.console import main
    from harness.metric import registry, vendor_env

    from tests.helpers import parity
    from tests.helpers.judges import realistic
    from tests.vendors.test_stock_parity import plain_cases
    from tests.vendors.test_stock_parity_more import _vendors

    before = _status()
    assert NAME in registry.names()
    assert "toy_vendor" in registry.folders()
    assert vendor_env.forced()[SWITCH] == "off"                        # its switches.py
    os.environ.pop(SWITCH, None)                                       # the run forces it again, from the folder

    # the reference judge: a default run scores it (the library refuses without its switch)
    out = tmp_path / "out"
    assert main(["run", "--cases", CANONICAL, "--metrics", NAME, "--out", str(out), "--run-id", "ref",
                 "--no-progress"]) == 0
    cells = _cells(out / "ref")
    assert len(cells) == 24 and {s for s, _ in cells.values()} <= {"scored", "unscored"}, cells
    assert cells["empty-answer"][0] == "unscored" and os.environ.get(SWITCH) == "off"

    # the realistic test judge answers its prompts from the vendor's kit
    with realistic.serve(mode="openai") as judge:
        assert main(["run", "--cases", CANONICAL, "--metrics", NAME, "--out", str(out), "--run-id", "realistic",
                     "--judge-url", judge.url, "--judge-model", realistic.MODEL, "--no-progress"]) == 0
        books = judge.stats()
    assert books["steps"].get(NAME, 0) >= 20 and books["unrecognised"] == 0 and books["crashed"] == 0, books
    ours = _cells(out / "realistic")

    # the stock-parity machinery finds its stock script and switches, and stock scores what the harness scores
    vendors = _vendors()
    script, module, metrics, switches = vendors["toy_vendor"]
    assert (module, metrics, switches) == ("toyvendorlib", (NAME,), {SWITCH: "off"})
    work = tmp_path / "stock"
    work.mkdir()
    runner = shutil.copy(os.path.join(ROOT, "tests", "helpers", "stock_common.py"), work)
    shutil.copy(script, work / "stock.py")
    cases_json = plain_cases(load_cases(CANONICAL), str(work / "cases.json"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "PYTHONPATH": str(toy), **switches}
    with realistic.serve(mode="openai") as judge:
        p = subprocess.run([sys.executable, runner, "stock.py", realistic.MODEL, cases_json, judge.url], cwd=work,
                           env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(p.stdout.strip().splitlines()[-1])
    assert data["project_modules"] == []
    stock = data["runs"][judge.url][NAME]
    for case_id, (status, score) in ours.items():
        if status == "scored":
            assert stock[case_id][0] == pytest.approx(score, abs=1e-9), (case_id, stock[case_id], score)
        else:
            assert stock[case_id][1] == "ValueError", (case_id, stock[case_id])

    # its parity rule is collected, and it explains the one difference
    rules = {r.name: r for r in parity.rules()}
    assert "empty answer (toyvendor)" in rules and rules["empty answer (toyvendor)"].metrics == (NAME,)

    # its offline test runs under pytest with the repository's test helpers
    t = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
                        "--rootdir", str(toy), str(toy / "toy_vendor" / "kit" / "test_offline.py")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([str(toy), ROOT])})
    assert t.returncode == 0 and "1 passed" in t.stdout, t.stdout[-2000:] + t.stderr[-2000:]
    capsys.readouterr()
    assert _status() == before, "adding a vendor from a folder touched files of the repository"
