"""Moved to ``toolclear.policies.langchain`` (one module per policy family); this name is
kept so that imports written against earlier versions still work."""

from .policies.langchain import *  # noqa: F403
from .policies.langchain import __all__  # noqa: F401
