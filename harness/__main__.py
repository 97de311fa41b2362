"""``python -m harness``: the installed ``harness`` console script (``harness_cli:main``), found
through the ``console_scripts`` entry points, so that harness/ never imports the layer above it."""
import sys
from importlib.metadata import entry_points

(_script,) = entry_points(group="console_scripts", name="harness")
sys.exit(_script.load()())
