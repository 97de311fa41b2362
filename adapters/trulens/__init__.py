"""TruLens 2.16.0 adapters: ``trulens.groundedness``, ``trulens.groundedness_answerability`` and
``trulens.citation``.

Modules without a leading underscore import no vendor code (adapter discovery imports them);
``_shims`` and ``_provider`` do, and are imported lazily from ``score``/``prepare`` through
:func:`harness.adapters.trulens.common.load_vendor`. ``judge`` holds the reference-judge handlers and
``units`` turns TruLens's return values into harness records.
"""
