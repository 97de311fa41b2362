"""Contract with the pinned Ragas: each step's prompt, schemas and request shape, and the vendor
hooks the adapters observe. A change fails loudly, naming the step and what changed.

The fixture is ``tests/helpers/contracts/ragas.json``. After checking a new Ragas version by hand (and
updating ``adapters/ragas/judge.py`` if a prompt changed), regenerate it with::

    .venv/bin/python tests/vendors/test_ragas_contract.py --write
"""
from __future__ import annotations

import hashlib
import inspect
import json
import sys
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script (--write): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conftest import ROOT  # noqa: E402

FIXTURE = Path(ROOT) / "tests" / "helpers" / "contracts" / "ragas.json"
REGEN = "regenerate with `.venv/bin/python tests/vendors/test_ragas_contract.py --write` after updating adapters/ragas/judge.py"

# step name -> (module, prompt class, sentinel input) ; the step names are adapters/ragas/judge.py's
_UTIL = {"f": "ragas.metrics.collections.faithfulness.util",
         "rg": "ragas.metrics.collections.response_groundedness.util"}
PROMPTS = {
    "statements": (_UTIL["f"], "StatementGeneratorPrompt", {"question": "Q?", "answer": "A. B."}),
    "nli": (_UTIL["f"], "NLIStatementPrompt", {"context": "C1\nC2", "statements": ["A.", "B."]}),
    "rg_judge1": (_UTIL["rg"], "ResponseGroundednessJudge1Prompt", {"response": "A. B.", "context": "C1\nC2"}),
    "rg_judge2": (_UTIL["rg"], "ResponseGroundednessJudge2Prompt", {"response": "A. B.", "context": "C1\nC2"}),
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _prompt(step: str):
    import importlib

    mod, cls, _ = PROMPTS[step]
    return getattr(importlib.import_module(mod), cls)()


def prompt_contract(step: str) -> dict:
    """What the reference judge relies on for one step, from the installed Ragas."""
    p = _prompt(step)
    rendered = p.to_string(p.input_model(**PROMPTS[step][2]))
    return {
        "prompt_class": f"{PROMPTS[step][0]}.{PROMPTS[step][1]}",
        "instruction_first_lines": p.instruction.splitlines()[:3],
        "instruction_sha256": _sha(p.instruction),
        "examples_sha256": _sha(p._generate_examples()),
        "input_schema": p.input_model.model_json_schema(),
        "output_schema": p.output_model.model_json_schema(),
        "rendered_sha256": _sha(rendered),
    }


def request_contract() -> dict:
    """The request each step sends through the gateway (a one-claim case, reference judge)."""
    from tests.helpers.scoring import score_one

    case = contract_case()
    out = {}
    for metric, steps in (("ragas.faithfulness", ["statements", "nli"]),
                          ("ragas.response_groundedness", ["rg_judge1", "rg_judge2"])):
        up = _Recording({("test", case.id): case})
        score_one(metric, case, upstream=up)
        assert len(up.bodies) == len(steps), f"{metric}: {len(up.bodies)} requests, pinned {len(steps)}"
        for step, body in zip(steps, up.bodies):
            system = [m for m in body["messages"] if m["role"] == "system"]
            out[step] = {
                "roles": [m["role"] for m in body["messages"]],
                "params": {k: v for k, v in body.items() if k not in ("messages", "model")},
                "system_first_line": system[0]["content"].strip().splitlines()[0] if system else None,
            }
    return out


def contract_case():
    """A small fixed case, so the request contract does not depend on the dataset."""
    from harness.core.records import Annotation, Case, Claim, Context, Evidence

    claim = Claim("Bake at 350 F.", (0, 14), "supported", (Evidence("1", 0, 13),))
    return Case("contract", "What temperature?", (Context("1", "Bake at 350 F for 8 to 10 minutes."),),
                "Bake at 350 F.", Annotation((claim,), True, False))


def hooks_contract() -> dict:
    """The vendor internals the adapters observe or rebind (see adapters/ragas/_llm.py)."""
    from harness.adapters.ragas.judge import REASK

    import instructor
    import ragas
    import ragas._analytics as analytics
    from instructor.providers.openai.utils import reask_md_json
    from ragas.metrics.collections import Faithfulness, ResponseGroundedness

    rg_init = inspect.signature(ResponseGroundedness.__init__).parameters
    return {
        "instructor.create.max_retries_default": inspect.signature(
            instructor.AsyncInstructor.create).parameters["max_retries"].default,
        "instructor.json_reask_starts_with_judge_REASK": REASK in inspect.getsource(reask_md_json),
        "ragas_version": ragas.__version__,
        "faithfulness.ascore": list(inspect.signature(Faithfulness.ascore).parameters),
        "response_groundedness.ascore": list(inspect.signature(ResponseGroundedness.ascore).parameters),
        "response_groundedness._get_judge_rating": list(
            inspect.signature(ResponseGroundedness._get_judge_rating).parameters),
        "response_groundedness.max_retries_default": rg_init["max_retries"].default,
        "analytics.get_userid_uses": sorted(
            n for n in analytics.get_userid.__wrapped__.__code__.co_names if n in ("user_data_dir", "makedirs")),
    }


def current_contract() -> dict:
    from harness.adapters.ragas._llm import vendor

    vendor()
    return {"steps": {s: prompt_contract(s) for s in PROMPTS}, "requests": request_contract(),
            "hooks": hooks_contract()}


class _Recording:
    """A reference upstream that keeps every request body."""

    kind = "reference"
    model = "reference-judge"

    def __init__(self, cases):
        from harness.judge.upstream import ReferenceUpstream

        self.inner, self.bodies = ReferenceUpstream(cases), []

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        self.bodies.append(body)
        return await self.inner.complete(cell, body)

    async def aclose(self):
        return None


@pytest.fixture(scope="module")
def pinned() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def current() -> dict:
    return current_contract()


def _diff(step: str, part: str, old, new) -> str:
    show = lambda v: json.dumps(v, ensure_ascii=False)[:300]
    return (f"ragas contract broken at step {step!r}: the {part} changed.\n  pinned: {show(old)}\n"
            f"  now:    {show(new)}\n{REGEN}")


@pytest.mark.parametrize("step", list(PROMPTS))
def test_prompt_and_schemas_unchanged(step, pinned, current):
    old, new = pinned["steps"][step], current["steps"][step]
    for part in ("prompt_class", "instruction_first_lines", "instruction_sha256", "input_schema",
                 "output_schema", "examples_sha256", "rendered_sha256"):
        assert old[part] == new[part], _diff(step, part, old[part], new[part])


@pytest.mark.parametrize("step", list(PROMPTS))
def test_request_shape_unchanged(step, pinned, current):
    old, new = pinned["requests"][step], current["requests"][step]
    for part in ("roles", "params", "system_first_line"):
        assert old[part] == new[part], _diff(step, f"request {part}", old[part], new[part])


def test_vendor_hooks_unchanged(pinned, current):
    for name, old in pinned["hooks"].items():
        if name == "ragas_version":
            continue
        assert current["hooks"][name] == old, _diff(name, "vendor hook", old, current["hooks"][name])


@pytest.mark.parametrize("step", list(PROMPTS))
def test_reference_judge_recognises_the_rendered_prompt(step):
    """The judge's step table matches the installed prompt: instruction start, schema title, input."""
    from harness.adapters.ragas.judge import STEPS, prompt_input, prompt_schema_title

    p = _prompt(step)
    rendered = p.to_string(p.input_model(**PROMPTS[step][2]))
    ours = {s.name: s for s in STEPS}[step]
    assert rendered.startswith(ours.instruction_start), f"step {step!r}: the instruction no longer starts " \
        f"with the judge's prefix; it starts {rendered[:120]!r}"
    assert prompt_schema_title(rendered) == ours.schema_title, f"step {step!r}: output schema title changed"
    assert prompt_input(rendered) == PROMPTS[step][2], f"step {step!r}: the input JSON framing changed"
    assert set(PROMPTS[step][2]) == ours.input_keys, f"step {step!r}: input keys changed"


if __name__ == "__main__":
    import harness  # noqa: F401  (vendor switches before ragas)

    if "--write" not in sys.argv:
        sys.exit("usage: tests/vendors/test_ragas_contract.py --write")
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(current_contract(), indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
