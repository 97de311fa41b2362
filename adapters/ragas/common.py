"""What the two Ragas adapters share: the documented shim and the deviations from stock use (no vendor import)."""
from __future__ import annotations

from harness.metric import Shim

SHIMS = (
    Shim("adapters/ragas/_llm.py",
         'Shim (vendor-notes/ragas.md §4, "ragas writes ~/.local/share/ragas/uuid.json"): even with '
         "`RAGAS_DO_NOT_TRACK=true` ragas builds an analytics event on every `llm_factory()` and every LLM "
         "call; building one calls `ragas._analytics.get_userid()`, which creates "
         '`appdirs.user_data_dir("ragas")/uuid.json` in the user\'s home. `vendor` rebinds the single name '
         "`ragas._analytics.user_data_dir` to `harness_data_dir` before ragas is used, so the file goes to a "
         "per-user directory under the system temp dir instead. Nothing else changes: the id is still made "
         "and never sent (tracking stays off). `tests/test_ragas_env.py` fails without it."),
)
"""The one change to Ragas's behaviour, shown on both cards (applied by ``_llm.vendor``)."""

DEVIATIONS = """\
Deviations from stock use (everything else is Ragas's own code; the stock-parity test
`tests/test_stock_parity.py` scores every canonical case with `llm_factory(model,
client=AsyncOpenAI(...))` and the collections metric pointed straight at the realistic test judge
and gets the same scores):
- Transport retries: the openai SDK's own retries are off (`max_retries=0`). Reason: the harness
  gateway owns transport retries (connection errors, timeouts, 429, 5xx), each attempt in the ledger.
- Instructor retry policy: stock instructor also repeats a request after an API error, which would
  multiply the gateway's attempts; the harness's policy keeps instructor's 3 attempts for the parse
  and validation errors instructor re-asks for, and none for API errors. A reply that is not the
  step's JSON reaches instructor as it came, so its re-ask runs as in stock use.
- Analytics data dir (the documented shim): ragas's telemetry-off uuid file goes under the system
  temp dir instead of the user's home.
"""
