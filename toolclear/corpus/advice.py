"""``toolclear advise``: for each agent on this machine, over its recent sessions, what
its context did and whether any policy pays once the prompt cache is counted.

No settings to choose: the sessions are found where the agents keep them
(``toolclear.corpus.sessions``), every setting of ``ADVISE_SPECS`` is replayed on each, priced
at the session's own model with the prompt cache and calibrated on its recorded usage,
and the pick is the corpus's own recommendation (``CorpusSweep.recommend``): the same
rows and the same rule as the Corpus page and ``toolclear corpus``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .sessions import AGENTS, SessionSummary, find_sessions, session_summaries

__all__ = ["ADVISE_SPECS", "AgentAdvice", "advise"]

ADVISE_SPECS: tuple[str, ...] = (
    "eino", "eino:threshold=10000,keep=20000", "eino:threshold=40000,keep=80000",
    "eino-reduction:skip_truncation=true", "eino-reduction:threshold=40000,skip_truncation=true",
    "anthropic", "anthropic:trigger=50000", "anthropic:trigger=150000,keep=5",
    "langchain", "langchain:trigger=50000", "openhands", "swe-agent",
    "claude-code-compact", "anthropic-compaction", "anthropic-compaction:trigger=100000", "codex-compact:limit=100000",
    'langchain-summarization:trigger=["tokens",60000]', "openhands-summarizing",
)
"""The settings ``advise`` tries on every session: each clearing family at its
reference's defaults and at a lower and a higher trigger, and the compaction policies
(against each session as recorded, with the agent's own compactions)."""


@dataclass(frozen=True)
class AgentAdvice:
    """One agent's recent sessions, and the setting to run (or that none pays)."""

    agent: str
    sessions: tuple[SessionSummary, ...]
    peak_context: int
    compactions: int
    cache_hit_rate: float | None
    recorded_dollars: float | None
    pays: bool
    best: str | None
    """The setting to run, as ``--policy`` takes it; None when none pays."""
    dollars_saved: float
    """What the best setting saves over these sessions, net of re-fetching what it lost."""
    needed: int
    """Results the best setting changed that the agent needed later."""
    summary: str
    snippet: tuple[str, str, str] | None = None
    """(title, language, code) of the best setting in its own framework's form."""
    errors: tuple[tuple[str, str], ...] = ()
    table: Any = field(default=None, repr=False, compare=False)
    shared_calls: int = 0
    """Calls found in more than one of these sessions (a resumed session repeats them),
    billed once in ``recorded_dollars``."""

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "sessions": [s.as_dict() for s in self.sessions],
                "peak_context": self.peak_context, "compactions": self.compactions,
                "cache_hit_rate": self.cache_hit_rate, "recorded_dollars": self.recorded_dollars,
                "shared_calls": self.shared_calls,
                "pays": self.pays, "best": self.best, "dollars_saved": self.dollars_saved, "needed": self.needed,
                "summary": self.summary,
                "snippet": dict(zip(("title", "language", "code"), self.snippet)) if self.snippet else None,
                "errors": [{"file": f, "error": e} for f, e in self.errors]}


def advise(env: Mapping[str, str] | None = None, *, recent: int = 10, engine: str = "serial",
           workers: int | None = None) -> list[AgentAdvice]:
    """Advice for each agent whose sessions are on this machine (``env``: the
    environment naming their homes), over its ``recent`` newest sessions."""
    env = os.environ if env is None else env
    out = []
    for agent in AGENTS:
        files = find_sessions(env, agent)[:max(1, recent)]
        if files:
            out.append(_one(agent, files, engine, workers))
    return out


def _one(agent: str, files: list[Any], engine: str, workers: int | None) -> AgentAdvice:
    from ..policies.snippets import policy_snippets
    from ..runs.lab import parse_policy
    from .sweeps import Corpus, CorpusFile, sweep_corpus

    summaries = tuple(session_summaries(files, jobs=1 if engine == "serial" else workers))
    readable = [s for s in summaries if not s.error]
    corpus = Corpus(tuple(CorpusFile(s.path, s.path) for s in readable))
    configs = [parse_policy(s) for s in ADVISE_SPECS]
    errors = [(s.path, s.error) for s in summaries if s.error]
    rates = [(s.cache_hit_rate, s.model_calls) for s in readable if s.cache_hit_rate is not None]
    from ..cost.billing import recorded_total

    total = recorded_total(s.call_dollars for s in readable)  # a call resumed sessions repeat, once
    base = dict(agent=agent, sessions=summaries, peak_context=max((s.peak_context for s in readable), default=0),
                compactions=sum(s.compactions for s in readable),
                cache_hit_rate=round(sum(r * n for r, n in rates) / max(1, sum(n for _, n in rates)), 4)
                if rates else None, recorded_dollars=total.dollars if total.calls else None,
                shared_calls=total.shared)
    if not readable:
        return AgentAdvice(**base, pays=False, best=None, dollars_saved=0.0, needed=0,  # type: ignore[arg-type]
                           summary="No session could be read.", errors=tuple(errors))
    sweep = sweep_corpus(corpus, configs, pricing="auto", workers=workers, calibrate=True,
                         engine=engine if len(readable) > 1 else "serial")  # type: ignore[arg-type]
    errors += list(sweep.errors)
    errors += [(str(r), str(e)) for r, e in sweep.table[sweep.table["error"] != ""][["run", "error"]]
               .drop_duplicates().itertuples(index=False)]
    rec = sweep.recommend()
    if rec.config is None:
        return AgentAdvice(**base, pays=False, best=None, dollars_saved=0.0, needed=0,  # type: ignore[arg-type]
                           summary=rec.summary, errors=tuple(errors), table=sweep.table)
    mine = sweep.table[(sweep.table["config"] == rec.label) & (sweep.table["error"] == "")]
    saved = float(mine["net_dollars_saved"].sum()) if mine["net_dollars_saved"].notna().any() \
        else float(mine["tokens_saved"].sum())
    snippet = policy_snippets(rec.config)[0]
    return AgentAdvice(**base, pays=True, best=rec.label, dollars_saved=round(saved, 6),  # type: ignore[arg-type]
                       needed=int(mine["needed_results"].sum()), summary=rec.summary, snippet=snippet,
                       errors=tuple(errors), table=sweep.table)
