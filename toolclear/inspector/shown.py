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

__all__ = ["Shown"]


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

    def new_backend(self) -> Any:
        """A fresh backend for another run of the policy, where it saves files."""
        return tc.MemoryBackend() if self.files or self.offloading is not None else None

    @cached_property
    def replayed(self) -> tc.Result:
        """The policy before every model call: the result itself in replay mode, else a
        replay made when a view first asks for it."""
        if self.result.mode == "replay":
            return self.result
        from toolclear.inspector.controls import sent_calibration

        return tc.replay(self.t.messages, self.config, backend=self.new_backend(), counter=self.counter,
                         calibration=sent_calibration(self.t, self.counter), offloading=self.offloading)

    @property
    def priced(self) -> Any:
        """The policy's cost as the verdict priced it (None without a pricing)."""
        v = self.verdict
        return v.comparison.costs[0] if v is not None and v.comparison is not None and v.comparison.costs else None

    @property
    def marks(self) -> tuple[int, ...]:
        """Where the log's own compactions are (the model call of each)."""
        return tuple(k for k, _ in self.t.marks)
