"""What the One run page shows, in one object every view takes: the run, the policy and
what it did, the counter, the pricing. Built once per rerun by ``one_run``; the views
read it and never reach back into the sidebar."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import toolclear as tc
from toolclear import schema
from toolclear.policies import PolicySpec, spec_for
from toolclear.runs.verdict import Verdict

__all__ = ["Shown", "run_policy"]


def run_policy(t: tc.Transcript, config: Any, mode: schema.Mode, counter: str,
               offloading: tc.ToolResultOffloadingConfig | None, files: bool) -> tuple[tc.Result, Any]:
    """The policy on the run in ``mode`` (a replay in tokens as sent), and the fresh
    backend that holds the files it saved (None where it saves none)."""
    from toolclear.inspector.controls import sent_calibration

    backend = tc.MemoryBackend() if files or offloading is not None else None
    if mode == "replay":
        return tc.replay(t.messages, config, backend=backend, counter=counter, offloading=offloading,
                         calibration=sent_calibration(t, counter)), backend
    return tc.apply(t.messages, config, backend=backend, counter=counter, offloading=offloading), backend


@dataclass(frozen=True)
class Shown:
    """One run under one policy, as the page's controls set it."""

    t: tc.Transcript
    digest: str
    """The file's content hash: the key of every cached computation on it."""
    conversations: int
    """How many conversations the file holds (the exports keep the others)."""
    kind: str
    """The policy (or preset) name picked in the sidebar."""
    config: Any
    counter: str
    mode: schema.Mode
    pricing: tc.Pricing | None
    calibrate: bool
    offloading: tc.ToolResultOffloadingConfig | None
    files: bool
    """A storage backend saves the policy's files (``PolicySpec.saves_files``)."""
    result: tc.Result
    """The policy in the picked mode: a replay, or one pass over the whole history."""
    backend: Any
    verdict: Verdict | None

    @property
    def spec(self) -> PolicySpec:
        return spec_for(self.config)

    @cached_property
    def replayed(self) -> tc.Result:
        """The policy before every model call: the result itself in replay mode, else a
        replay made when a view first asks for it."""
        if self.result.mode == "replay":
            return self.result
        return run_policy(self.t, self.config, "replay", self.counter, self.offloading, self.files)[0]

    @property
    def priced(self) -> Any:
        """The policy's cost as the verdict priced it (None without a pricing)."""
        v = self.verdict
        return v.comparison.costs[0] if v is not None and v.comparison is not None and v.comparison.costs else None

    @property
    def marks(self) -> tuple[int, ...]:
        """Where the log's own compactions are (the model call of each)."""
        return tuple(k for k, _ in self.t.marks)
