"""The core layer: records, vocabulary, errors, spans, the aligner and redaction.

It imports nothing else of the project, so every other layer may import it."""
