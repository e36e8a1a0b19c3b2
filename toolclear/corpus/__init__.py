"""Many runs at once: a folder, an archive or the sessions an agent left on this machine.

* ``sweeps``: ``load_corpus`` and ``sweep_corpus`` (every run under every setting, on
  one core, a process pool or Dask) and the ``Recommendation`` the sweep makes;
* ``archives``: reading zip and tar members within a budget;
* ``sessions``: where Claude Code, Codex CLI and Gemini CLI keep their logs;
* ``advice``: the recommendation for the agent's own recent sessions (``advise``).
"""

from __future__ import annotations

from .sweeps import Corpus, CorpusFile, CorpusSweep, Recommendation, grid, load_corpus, sweep_corpus

__all__ = ["Corpus", "CorpusFile", "CorpusSweep", "Recommendation", "grid", "load_corpus", "sweep_corpus"]
