"""Re-export of :mod:`rein.harness.errors` (the tree is drawn there)."""

from rein.harness.errors import *  # noqa: F403
from rein.harness.errors import __all__  # noqa: F401
