"""Moved to ``toolclear.policies.eino_clear`` (one module per policy family); this name is
kept so that imports written against earlier versions still work."""

from .policies.eino_clear import *  # noqa: F403
from .policies.eino_clear import __all__  # noqa: F401
