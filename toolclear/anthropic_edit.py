"""Moved to ``toolclear.policies.anthropic`` (one module per policy family); this name is
kept so that imports written against earlier versions still work."""

from .policies.anthropic import *  # noqa: F403
from .policies.anthropic import __all__  # noqa: F401
