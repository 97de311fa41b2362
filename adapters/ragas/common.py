"""What the two Ragas adapters share: the documented shim (no vendor import)."""
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
