"""From the transcript's tokens to the tokens the model was really sent.

A log rarely holds the whole prompt: no system prompt, no tool definitions, and a
resumed or compacted session starts mid-conversation. Where the log recorded each
call's usage, the prompt of that call *is known*; ``calibrate`` keeps those figures and
fits, on at most the first 10 % of calls, a per-call overhead and a tokenizer scale
for the calls that recorded nothing. A replay given the calibration speaks in tokens
as sent: each call's unreduced context is what it recorded, the policy's savings
(scaled) come off it, and the triggers of policies that count the whole prompt
(Anthropic's, LangChain's, eino's reduction) see it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from operator import mul

from .._kept import KeptFor
from ..counters import TokenCounter, count_tokens, prefix_sums
from ..model import Message

__all__ = ["Calibration", "calibrate"]

MAX_SCALE = 2.0
MIN_SCALE = 0.5


@dataclass(frozen=True)
class Calibration:
    """How one run's transcript tokens map onto the tokens its calls sent."""

    overhead_tokens: int = 0
    """Tokens every call sent beyond the transcript (system prompt, tools, earlier history)."""
    scale: float = 1.0
    """The provider's tokens per counted token."""
    calibrated_on: int = 0
    """Recorded calls the fit used (at most the first 10 %)."""
    prompts: Mapping[int, int] = field(default_factory=dict, repr=False)
    """Recorded prompt tokens per call (the index of the assistant message it produced)."""
    cuts: tuple[int, ...] = ()
    """Where the log compacted its context: later calls sent only what follows."""
    notes: tuple[str, ...] = ()
    media: Mapping[int, int] = field(default_factory=dict, repr=False)
    """Per message holding images, PDFs or audio: the tokens the provider bills for them
    less what the counter gave their base64 (``toolclear.cost.media``)."""

    @cached_property
    def _media_sums(self) -> tuple[list[int], list[int]]:
        order = sorted(self.media)
        return order, list(accumulate((self.media[i] for i in order), initial=0))

    def media_between(self, start: int, stop: int) -> int:
        """The media corrections of messages ``start`` to ``stop - 1``."""
        if not self.media:
            return 0
        order, sums = self._media_sums
        return sums[bisect_left(order, stop)] - sums[bisect_left(order, start)]

    def sent(self, call_index: int, transcript_tokens: int) -> int:
        """The unreduced prompt of a call whose context holds ``transcript_tokens``
        (counted since the last compaction): recorded where the log has it, else fitted."""
        recorded = self.prompts.get(call_index)
        if recorded:
            return recorded
        return self.overhead_tokens + round(self.scale * transcript_tokens)

    @property
    def fitted(self) -> bool:
        return self.calibrated_on > 0


SCALE_SPREAD = 0.2
"""How far a provider's tokens per counted token stray from run to run (the standard
deviation of the whole-run fits on the project's Claude Code sessions: 1.09-1.92)."""
PROMPT_NOISE = 3_000
"""How far one call's recorded prompt strays from a straight line in the transcript's
tokens (content the tokenizers count differently: one web page, one image)."""


def fit_line(xs: Sequence[int], ys: Sequence[int], prior: float = 1.0) -> tuple[int, float]:
    """(overhead, scale) by least squares of ``ys`` on ``xs``, the scale drawn towards
    ``prior`` as much as the points leave it unsettled (a ridge: three calls close
    together say little about the slope; fifteen spread over 100,000 tokens say it
    all) and bounded to [0.5, 2]; with fewer than two distinct points, ``prior``."""
    n, sx, sy = len(xs), sum(xs), sum(ys)
    if n >= 2 and max(xs) > min(xs):
        # the centred sums from exact integer ones (token counts are ints): one pass in C each
        sxx = (n * sum(map(mul, xs, xs)) - sx * sx) / n
        sxy = (n * sum(map(mul, xs, ys)) - sx * sy) / n
        ridge = (PROMPT_NOISE / SCALE_SPREAD) ** 2
        scale = (sxy + ridge * prior) / (sxx + ridge)
        scale = min(MAX_SCALE, max(MIN_SCALE, scale))
    else:
        scale = prior  # one point cannot separate the overhead from the scale
    return max(0, round((sy - scale * sx) / n)), scale


def cut_before(cuts: Sequence[int], index: int) -> int:
    """The last compaction before ``index`` (0: none); ``cuts`` ascending."""
    k = bisect_left(cuts, index)
    return cuts[k - 1] if k else 0


STRETCH_CALLS = 5
"""Recorded calls per stretch between compactions that say what it sent beyond its transcript."""


def beyond_transcript(prompts: Mapping[int, int], prefix: Sequence[int], cuts: Sequence[int], scale: float,
                      calls: int = STRETCH_CALLS) -> list[list[int]]:
    """Per stretch of the run (before the log's first compaction, after each), what its
    first ``calls`` recorded calls sent beyond the transcript they held: the recorded
    prompt less the transcript since the last compaction, at ``scale``. The system
    prompt and tools, and the history a file that starts mid-session lacks or what an
    agent attaches again after a compaction (``cost`` prices each stretch by it; a
    compaction policy's trigger reads it)."""
    out: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    for end in sorted(prompts):
        k = bisect_left(cuts, end)
        if len(out[k]) < calls:
            cut = cuts[k - 1] if k else 0
            out[k].append(prompts[end] - round(scale * (prefix[end] - prefix[cut])))
    return out


_calibrations: KeptFor[Calibration] = KeptFor(4)


def calibrate(messages: Sequence[Message], counter: str | TokenCounter | None = None) -> Calibration:
    """The calibration of one run from its recorded usage (``Usage.prompt_tokens`` on
    the assistant messages): every recorded prompt, and an overhead and a scale fitted
    on at most the first 10 % of calls (by ``counter``, eino's estimate unless given).
    A log that recorded nothing gives the identity (overhead 0, scale 1), saying so.
    Worked out once per transcript (a tuple) and named counter: the app and a sweep
    calibrate the same run for every setting they replay."""
    msgs = messages if isinstance(messages, tuple) else tuple(messages)
    if counter is None or isinstance(counter, str):
        return _calibrations.get(msgs, lambda: _calibrate(msgs, counter), extra=counter)
    return _calibrate(msgs, counter)


def _calibrate(msgs: tuple[Message, ...], counter: str | TokenCounter | None) -> Calibration:
    from .logfacts import SYNTHETIC_MODEL, _cut_before_each, _log_arrays, _log_facts, _numpy

    cuts, recorded = _log_facts(msgs)  # read once per transcript, shared with pricing
    np = _numpy()
    from .media import media_corrections, provider_of
    from .windows import run_model

    counts: Sequence[int] = count_tokens(msgs, counter)
    # images, PDFs and audio as the provider bills them, not as their base64 text
    media = media_corrections(msgs, counts, provider_of(run_model(msgs)))
    media_note = [f"{len(media)} message(s) with images, PDFs or audio counted as the provider bills them"] \
        if media else []
    if np is not None:  # the log's usage as arrays, read once per transcript; the fit over them at once
        la = _log_arrays(msgs)
        prompts = _recorded_prompts(msgs)
        if not prompts:
            return Calibration(cuts=cuts, notes=("the log recorded no usage: tokens are the transcript's",
                                                 *media_note), media=media)
        calls_a = np.flatnonzero(la.assistant)
        n_calls = len(calls_a)
        budget = max(1, n_calls // 10)
        first = calls_a[:budget]
        # the first 10 % of calls; if none of them recorded, the first recorded ones
        chosen_a = first[la.billed[first]]
        if not len(chosen_a):
            chosen_a = np.flatnonzero(la.billed)[:budget]
        if media:
            shifted = [max(0, c + media.get(i, 0)) for i, c in enumerate(counts[: int(chosen_a[-1]) + 1])]
            prefix_a = np.asarray(prefix_sums(shifted), dtype=np.int64)
        else:  # the run's own prefix sums (kept per run): the same below the last chosen call
            prefix_a = np.frombuffer(prefix_sums(counts), dtype=np.int64)
        xs = (prefix_a[chosen_a] - prefix_a[_cut_before_each(cuts, chosen_a)]).tolist()
        ys = la.prompt[chosen_a].tolist()
    else:
        calls = [i for i, m in enumerate(msgs) if m.role == "assistant"]
        n_calls = len(calls)
        prompts = {i: u.prompt_tokens for i in recorded
                   if (m := msgs[i]).role == "assistant" and (u := m.usage) is not None and u.prompt_tokens > 0
                   and u.model != SYNTHETIC_MODEL}
        if not prompts:
            return Calibration(cuts=cuts, notes=("the log recorded no usage: tokens are the transcript's",
                                                 *media_note), media=media)
        budget = max(1, len(calls) // 10)
        # the first 10 % of calls; if none of them recorded, the first recorded ones
        chosen = [i for i in calls[:budget] if i in prompts] or sorted(prompts)[:budget]
        head = counts[: max(chosen) + 1]  # the fit reads no further
        if media:
            head = [max(0, c + media.get(i, 0)) for i, c in enumerate(head)]
        prefix = prefix_sums(head)
        xs = [prefix[i] - prefix[cut_before(cuts, i)] for i in chosen]
        ys = [prompts[i] for i in chosen]
    overhead, scale = fit_line(xs, ys)
    notes = [f"{len(prompts):,} of {n_calls:,} calls recorded their prompt; overhead {overhead:,} tokens per "
             f"call and tokenizer scale {scale:.3f} fitted on {len(xs)}"]
    if scale in (MIN_SCALE, MAX_SCALE):
        notes.append(f"the fitted scale hit its bound ({scale}): the fit is poor, the transcript may not hold "
                     "what the model was sent")
    notes += media_note
    return Calibration(overhead, scale, len(xs), prompts, cuts, tuple(notes), media)


def _recorded_prompts(msgs: tuple[Message, ...]) -> Mapping[int, int]:
    """Message index -> the prompt its call recorded, of every billed call: a fact of
    the transcript, kept while it is in use (a calibration per counter reads it)."""
    from .logfacts import _log_arrays

    def read() -> Mapping[int, int]:
        import numpy as np

        la = _log_arrays(msgs)
        billed = np.flatnonzero(la.billed)
        # one dict every calibration of the transcript shares (picklable: results travel to
        # worker processes and Streamlit's cache); nothing writes to it
        return dict(zip(billed.tolist(), la.prompt[billed].tolist()))
    return _prompts_kept.get(msgs, read)


_prompts_kept: KeptFor[Mapping[int, int]] = KeptFor(8)


def as_sent(calibration: Calibration, call_index: int, prefix: Sequence[int]) -> int:
    """The unreduced prompt of the call at ``call_index``, given the replay's prefix sums."""
    cut = cut_before(calibration.cuts, call_index)
    return calibration.sent(call_index, prefix[call_index] - prefix[cut] + calibration.media_between(cut, call_index))
