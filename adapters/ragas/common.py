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
         "and never sent (tracking stays off). `tests/vendors/test_ragas_env.py` fails without it."),
)
"""The one change to Ragas's behaviour, shown on both cards (applied by ``_llm.vendor``)."""

DEVIATIONS = """\
Deviations from stock use (everything else is Ragas's own code; the stock-parity test
`tests/vendors/test_stock_parity.py` scores every canonical case with `llm_factory(model,
client=AsyncOpenAI(...))` and the collections metric pointed straight at the realistic test judge
and gets the same scores):
- Transport retries: the openai SDK's own retries are off (`max_retries=0`). Reason: the harness
  gateway owns transport retries (connection errors, timeouts, 429, 5xx), each attempt in the ledger.
- Instructor retry policy: none; instructor's own is kept (3 attempts per step on any exception:
  a reply that is not the step's JSON is re-asked, a reply cut at the token limit or an API error
  the gateway gave up on is asked again, then `InstructorRetryException`). Measured effect against
  stock (`tests/vendors/test_stock_parity_modes.py`, issue 37): with a judge that cuts a reply at the token
  limit once, every answer scores as in stock use (with the parse-errors-only policy the harness
  used before, every answer of Faithfulness errored); with a judge that always cuts, both raise
  `InstructorRetryException` after 3 requests per step. An API error the gateway gave up on is
  asked 3 times per step, each with the gateway's own attempts (stock: 3 with the SDK's 2 retries).
- Analytics data dir (the documented shim): ragas's telemetry-off uuid file goes under the system
  temp dir instead of the user's home.
"""
