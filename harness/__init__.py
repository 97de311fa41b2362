"""groundedness-harness: run vendor groundedness metrics on the same cases, through one judge."""
from harness.vendor_env import quiet_vendors as _quiet_vendors

_quiet_vendors()

__version__ = "0.1.0"
