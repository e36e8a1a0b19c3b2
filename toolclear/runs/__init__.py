"""A policy on a run: the run API.

* ``lab``: ``apply`` (one pass), ``replay`` (call by call), ``recorded`` (the run as the
  agent ran it) and ``compare`` (several settings side by side, priced);
* ``losses``: what a replay cleared that later calls needed;
* ``verdict``: the one answer the app, the CLI and the corpus give for a run;
* ``report``: a result as per-message rows and the report JSON.

The functions are re-exported from ``toolclear``; this package re-exports nothing, so
each module keeps its own name (``toolclear.runs.losses`` the module, ``toolclear.losses``
the function).
"""
