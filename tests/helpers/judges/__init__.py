"""Deterministic test judges that stand in for real LLMs (served over --judge-url in tests).

``tests.helpers.judges.realistic`` is the realistic one: it never reads annotations, recognises each
vendor's step from the prompt, and answers the way a real model does (paraphrases, near-verbatim
quotes, code fences, prose before JSON, bare numbers, missing keys and usage).
"""
