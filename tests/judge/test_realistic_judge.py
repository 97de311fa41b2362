"""The realistic test judge itself: it reads prompts, not annotations; it is deterministic; it
misbehaves at the documented rates; it serves over HTTP and keeps books of what it served."""
import json
import re
import subprocess
import sys
import urllib.request

from harness.adapters.inhouse.span import decompose_messages, verify_messages

import pytest

from tests.conftest import ROOT
from tests.helpers.judges import text as T
from tests.helpers.judges.fixtures import realistic_judge  # noqa: F401 - fixture
from tests.helpers.judges.realistic import Noise, RealisticJudge, flatten

RAGAS_NLI = ("Your task is to judge the faithfulness of a series of statements based on a given context. ...\n"
             "Now perform the same with the following input\ninput: {\n    \"context\": \"Bake at 350 F for 8 to 10 "
             "minutes.\",\n    \"statements\": [\"Bake at 350 F.\", \"The recipe yields two dozen cookies.\"]\n}\n"
             "Output: ")
DEEPEVAL_VERDICTS = ("Based on the given claims, which is a list of strings, generate a list of JSON objects ...\n"
                     "Retrieval Contexts:\nBake at 350 F for 8 to 10 minutes.\n\nClaims:\n"
                     "['The baking temperature is 350 F.', 'The recipe yields two dozen cookies.']\n\nJSON:")
TRULENS_G = ("SOURCE: Bake at 350 F for 8 to 10 minutes. Cool on a wire rack.\n\nSTATEMENT: Cool the cookies on "
             "a wire rack.\n\nRespond ONLY with a single-line JSON object having exactly these keys: ...")


def content(judge, messages):
    return judge.complete({"model": "m", "messages": messages})["choices"][0]["message"]["content"]


def test_recognises_vendor_steps_from_the_prompt_and_judges_by_overlap():
    j = RealisticJudge(Noise.none())
    nli = json.loads(content(j, [{"role": "system", "content": "As a genius expert..."},
                                 {"role": "user", "content": RAGAS_NLI}]))
    assert [s["verdict"] for s in nli["statements"]] == [1, 0]
    ver = json.loads(content(j, [{"role": "user", "content": [{"type": "text", "text": DEEPEVAL_VERDICTS}]}]))
    assert [v["verdict"] for v in ver["verdicts"]] == ["yes", "borderline"]
    g = json.loads(content(j, [{"role": "system", "content": "You are an INFORMATION OVERLAP classifier; ..."},
                               {"role": "user", "content": TRULENS_G}]))
    assert g["score"] == 3 and g["supporting_evidence"] != "NOTHING FOUND"
    assert j.books.unrecognised == 0 and j.books.calls == 3
    assert content(j, [{"role": "user", "content": "Write a poem."}]).startswith("I'm not sure")
    assert j.books.unrecognised == 1


def _json(reply):
    return json.loads(re.sub(r"^```json\n|\n```$|^Here is the JSON you asked for:\n\n", "", reply))


def test_in_house_steps_paraphrase_and_quote_nearly_verbatim(canonical):
    j = RealisticJudge()
    exact = near = invented = 0
    for case in canonical:
        if not case.answer.strip():
            continue
        own = _json(content(j, decompose_messages(case)))["claims"]
        human = [c.text for c in case.annotation.claims]   # the test may read labels; the judge never does
        for claims in (own, human, human[::-1]):
            for v in _json(content(j, verify_messages(case, claims)))["verdicts"]:
                for e in v.get("evidence", []):
                    text = case.context(e["context_id"]).text
                    if e["quote"] in text:
                        exact += 1
                    elif T.content(e["quote"]) <= T.content(text):
                        near += 1
                    else:
                        invented += 1
    assert j.books.unrecognised == 0
    total = exact + near + invented
    assert total >= 60
    assert 0.35 <= near / total <= 0.65, (exact, near, invented)   # about half altered
    assert exact > 0.3 * total and 0 < invented < 0.15 * total


def test_same_prompt_same_reply_whatever_the_request_options():
    a, b = RealisticJudge(), RealisticJudge()
    msgs = [{"role": "user", "content": DEEPEVAL_VERDICTS}]
    parts = [{"role": "user", "content": [{"type": "text", "text": DEEPEVAL_VERDICTS}]}]
    r1 = a.complete({"model": "x", "messages": msgs, "temperature": 0})
    r2 = b.complete({"model": "y", "messages": parts, "response_format": {"type": "json_object"}})
    assert r1["choices"] == r2["choices"] and flatten(msgs) == flatten(parts)


def test_noise_rates_are_about_the_documented_ones():
    j = RealisticJudge()
    fenced = prose = no_usage = 0
    n = 2000
    for i in range(n):
        r = j.complete({"messages": [{"role": "user", "content": DEEPEVAL_VERDICTS.replace("350", str(i))}]})
        c = r["choices"][0]["message"]["content"]
        fenced += c.startswith("```json")
        prose += c.startswith("Here is")
        no_usage += "usage" not in r
    assert 0.04 < fenced / n < 0.08 and 0.015 < prose / n < 0.045 and 0.003 < no_usage / n < 0.02
    books = j.books.as_dict()
    assert books["calls"] == n and books["calls_without_usage"] == no_usage
    assert books["reported_prompt_tokens"] < books["prompt_tokens"]


def _get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_served_over_http_with_books(realistic_judge):  # noqa: F811 - fixture
    realistic_judge.reset()
    url = realistic_judge.url
    status, r = _post(f"{url}/chat/completions", {"model": "m", "messages": [{"role": "user", "content": RAGAS_NLI}]})
    assert status == 200 and r["object"] == "chat.completion"
    status, err = _post(f"{url}/responses", {"model": "m", "input": "x"})
    assert status == 400 and "not supported" in err["error"]["message"]
    stats = _get(url.removesuffix("/v1") + "/stats")
    assert stats["calls"] == 1 and stats["steps"] == {"ragas.nli": 1}
    assert _get(f"{url}/models")["data"][0]["id"] == "realistic-judge"


def test_module_runs_as_a_server():
    p = subprocess.Popen([sys.executable, "-m", "tests.helpers.judges.realistic", "--port", "0"], cwd=ROOT,
                         stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(p.stdout.readline())
        status, r = _post(f"{info['url']}/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
        assert status == 200 and info["model"] == "realistic-judge"
    finally:
        p.terminate()
        p.wait(10)


@pytest.mark.parametrize("kind", ["comma", "stop", "ellipsis"])
def test_altered_quotes_are_near_misses_not_verbatim(kind):
    ctx = "Bake for 8 to 10 minutes, until the edges are golden but the centres still look soft."
    quote = "Bake for 8 to 10 minutes, until the edges are golden"
    altered = T.alter_quote(quote, ctx, kind)
    assert altered != quote and altered not in ctx
