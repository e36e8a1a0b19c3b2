"""Moved to ``toolclear.policies.eino_reduction`` (one module per policy family); this name is
kept so that imports written against earlier versions still work."""

from .policies.eino_reduction import *  # noqa: F403
from .policies.eino_reduction import __all__  # noqa: F401
