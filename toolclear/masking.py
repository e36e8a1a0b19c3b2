"""Moved to ``toolclear.policies.masking`` (one module per policy family); this name is
kept so that imports written against earlier versions still work."""

from .policies.masking import *  # noqa: F403
from .policies.masking import __all__  # noqa: F401
