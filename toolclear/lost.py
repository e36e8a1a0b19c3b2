"""What a policy loses: the results the agent needed after the policy had cleared them.

A recorded run shows what the agent used at each call: the terms of its reply. Replaying
a policy over the run shows which of those terms only a changed message still held in
the unreduced context, and no longer held in the context the policy leaves. Such a term
is strong evidence (not proof) that the reply depended on the changed message; the agent
would have had to fetch it again. The definition is fixed (see ``terms`` and ``pieces``);
the README says what it is and is not, and its measured precision.

Linear in the run: every message's pieces are counted once as it enters the context (and
once more if the policy changes it), with running counts of the pieces the unreduced and
the reduced context hold; no call rescans the history.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .model import Message

__all__ = ["Losses", "LostReference", "losses", "message_text", "pieces", "terms"]

# maximal runs (starting where no run character precedes) of 8 or more that hold a signal
# character somewhere (checked again after stripping): the scan skips plain words in C,
# not in a Python loop, and tries each run once (linear however long a run is)
_RUN = re.compile(r"(?<![A-Za-z0-9_./:-])(?=[A-Za-z0-9_./:-]*?(?:[0-9_./:]|[a-z][A-Z]))[A-Za-z0-9_./:-]{8,}")
_EDGE = "./:-"
_SIGNAL = re.compile(r"[0-9_/.:]|[a-z][A-Z]")
_SEPARATORS = re.compile(r"[./:]")
_LINT = ("nolint:", "noqa", "pylint:", "eslint-disable", "type:")
_LANGUAGE = frozenset(sys.stdlib_module_names) | frozenset(
    "np pd plt tf torch t tb b fmt os io ioutil strings strconv errors bytes json filepath path sort sync context "
    "http url exec regexp time testing math rand bufio log slog reflect runtime atomic".split())
MIN_LEN, MAX_LEN = 8, 200


def _is_term(run: str) -> bool:
    return (MIN_LEN <= len(run) <= MAX_LEN and _SIGNAL.search(run) is not None
            and not run.startswith(_LINT) and run.split(".", 1)[0] not in _LANGUAGE)


def terms(text: str) -> set[str]:
    """The terms of a text: maximal runs of ``[A-Za-z0-9_./:-]``, stripped of leading and
    trailing ``. / : -``, 8 to 200 characters long, holding a digit, ``_``, ``/``, ``.``,
    ``:`` or a lowercase letter followed by an uppercase one; not a lint directive, and
    not headed (before the first ``.``) by a standard-library module or a language's
    everyday package name (``fmt.Errorf``, ``np.array``)."""
    out = set()
    for run in _RUN.findall(text):
        run = run.strip(_EDGE)
        if _is_term(run):
            out.add(run)
    return out


def _term_pieces(term: str, out: set[str]) -> None:
    bounds = [0]
    for m in _SEPARATORS.finditer(term):
        bounds += [m.start(), m.end()]
    bounds.append(len(term))
    spans = list(zip(bounds[::2], bounds[1::2]))  # each component's (start, end)
    for i, (start, _) in enumerate(spans):
        for _, end in spans[i:]:
            if end - start >= MIN_LEN:
                piece = term[start:end].strip(_EDGE)
                if len(piece) >= MIN_LEN:
                    out.add(piece)


def pieces(text: str) -> set[str]:
    """The pieces of a text: of each of its terms, the term itself and every substring
    from the start of one component (split at ``. / :``) to the end of the same or a
    later one, stripped as terms are, at least 8 characters long."""
    return _pieces_of_terms(terms(text))


def _pieces_of_terms(found: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for term in found:
        if _SEPARATORS.search(term) is None:
            out.add(term)  # one component: the term is its only piece
        else:
            _term_pieces(term, out)
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def message_terms(m: Message, by_text: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The terms of a message's text, worked out once per message (kept on it, as token
    counts are): a sweep of many settings over one run reads each text once. With
    ``by_text``, a text met before (a file read twice) is not scanned again."""
    got = m._memo.get(_MEMO_KEY)
    if got is None:
        text = message_text(m)
        got = by_text.get(text) if by_text is not None else None
        if got is None:
            got = frozenset(terms(text))
            if by_text is not None:
                by_text[text] = got
        m._memo[_MEMO_KEY] = got
    return got


_MEMO_KEY = "lost:terms"


def message_text(m: Message) -> str:
    """A message's text for the losses: its text content, and for an assistant message
    every string value in its tool calls' arguments (parsed as JSON when they are JSON,
    else the raw string; keys left out)."""
    parts = [m.content]
    if m.role == "assistant":
        for call in m.tool_calls:
            try:
                parsed = json.loads(call.arguments)
            except (ValueError, RecursionError):
                parts.append(call.arguments)
                continue
            parts.extend(_strings(parsed))
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class LostReference:
    """At model call ``call_index``, the reply used ``terms`` that only the changed
    message ``message_index`` (among others, perhaps) still held unreduced."""

    call_index: int
    message_index: int
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Losses:
    """The lost references of a replay, the changed messages that were needed, and what
    fetching each of them again once would cost in tokens."""

    references: tuple[LostReference, ...]
    needed: tuple[int, ...]
    """Indices of the changed messages with at least one lost reference, ascending."""
    refetch_tokens: int
    """The needed messages' original tokens (the replay's counter), summed."""
    calls: int = 0
    """Model calls whose reply was looked at."""
    changed: int = 0
    """Messages the policy changed at some call."""

    @property
    def lost_terms(self) -> int:
        """Distinct (call, term) pairs lost."""
        return len({(r.call_index, t) for r in self.references for t in r.terms})

    def by_message(self) -> dict[int, list[LostReference]]:
        """Each needed message's lost references, in call order."""
        out: dict[int, list[LostReference]] = defaultdict(list)
        for r in self.references:
            out[r.message_index].append(r)
        return dict(out)

    def per_100_calls(self) -> float:
        """Needed results per 100 model calls: the loss rate a budget is stated in."""
        return 100 * len(self.needed) / self.calls if self.calls else 0.0


@dataclass
class _RunFacts:
    """What every replay of one run shares, whatever the policy: the terms any reply can
    use (every assistant message's), and each message's pieces among them. Kept on the
    run's first message, as token counts are kept on each message, so a sweep of many
    settings over a run cuts its texts into pieces once."""

    last: Message
    n: int
    among: frozenset[str]
    by_text: dict[str, frozenset[str]]
    by_terms: dict[frozenset[str], frozenset[str]]
    pieces: dict[int, frozenset[str]]


def _run_facts(original: Sequence[Message]) -> _RunFacts:
    memo = original[0]._memo if original else {}
    facts = memo.get(_RUN_KEY)
    if isinstance(facts, _RunFacts) and facts.n == len(original) and facts.last is original[-1]:
        return facts
    by_text: dict[str, frozenset[str]] = {}
    among = frozenset().union(*(message_terms(m, by_text) for m in original if m.role == "assistant"))
    facts = _RunFacts(original[-1] if original else Message("user"), len(original), among, by_text, {}, {})
    if original:
        memo[_RUN_KEY] = facts
    return facts


_RUN_KEY = "lost:run"


class _Contexts:
    """Running counts of the pieces the unreduced context and the policy's context hold,
    moved forward call by call: each message's pieces are counted when it enters the
    context, and once more if the policy changes it."""

    def __init__(self, original: Sequence[Message], final: Sequence[Message], facts: _RunFacts) -> None:
        self.original, self.final, self.among = original, final, facts.among
        self.by_terms, self.by_text, self.memo = facts.by_terms, facts.by_text, facts.pieces
        self.unreduced: Counter[str] = Counter()
        self.reduced: Counter[str] = Counter()
        self.holders: dict[str, list[int]] = defaultdict(list)  # piece -> changed messages holding it
        self.changed: set[int] = set()
        self.inside = 0  # messages [0, inside) are in the context

    def pieces_of(self, m: Message) -> frozenset[str]:
        """A message's pieces that some reply's terms could match (only those are ever
        asked about); the same terms (a file read twice) are cut into pieces once."""
        found = message_terms(m, self.by_text)
        got = self.by_terms.get(found)
        if got is None:
            got = self.by_terms[found] = frozenset(_pieces_of_terms(found) & self.among) if self.among else frozenset()
        return got

    def original_pieces(self, i: int) -> frozenset[str]:
        got = self.memo.get(i)
        if got is None:
            got = self.memo[i] = self.pieces_of(self.original[i])
        return got

    def change(self, i: int) -> None:
        if i in self.changed or not 0 <= i < len(self.original):
            return
        self.changed.add(i)
        own = self.original_pieces(i)
        for p in own:
            self.holders[p].append(i)
        if i < self.inside:  # counted in its original form so far: from now on its changed form
            self.reduced.subtract(own)
            self.reduced.update(self.pieces_of(self.final[i]))

    def advance(self, end: int) -> None:
        while self.inside < min(end, len(self.original)):
            i = self.inside
            own = self.original_pieces(i)
            self.unreduced.update(own)
            self.reduced.update(self.pieces_of(self.final[i]) if i in self.changed else own)
            self.inside += 1

    def lost(self, reply_terms: Iterable[str]) -> dict[int, list[str]]:
        """Changed message -> the reply's terms only its original form still held."""
        out: dict[int, list[str]] = defaultdict(list)
        for term in sorted(reply_terms):
            if self.unreduced[term] > 0 and self.reduced[term] <= 0:
                for i in self.holders.get(term, ()):
                    out[i].append(term)
        return out


def losses(result: Any, messages: Sequence[Message] | None = None) -> Losses:
    """The losses of a replay (``toolclear.replay`` of any policy). ``messages`` are the
    run as recorded; by default the ones the replay was given. A single pass loses
    nothing by this measure: no reply comes after it."""
    if getattr(result, "mode", "replay") != "replay":
        return Losses((), (), 0)  # one pass at the end of the run: no later reply to need anything
    memo = getattr(result, "__dict__", None)
    if messages is None and memo is not None and isinstance(memo.get(_RESULT_KEY), Losses):
        return memo[_RESULT_KEY]  # a result is immutable: its losses are found once
    found = _losses(result, messages)
    if messages is None and memo is not None:
        memo[_RESULT_KEY] = found
    return found


_RESULT_KEY = "_lost"


def _losses(result: Any, messages: Sequence[Message] | None) -> Losses:
    original = tuple(messages) if messages is not None else tuple(getattr(result, "_seen", ()) or ())
    if not original and result.messages:
        raise ConfigError("losses: the replay holds no original messages; pass messages=")
    if len(original) != len(result.messages):
        raise ConfigError(f"losses: {len(original)} original messages for a replay of {len(result.messages)}")
    facts = _run_facts(original)
    replies = {s.call_index: message_terms(original[s.call_index], facts.by_text) for s in result.steps
               if s.call_index < len(original) and original[s.call_index].role == "assistant"}
    ctx = _Contexts(original, result.messages, facts)
    refs: list[LostReference] = []
    needed: set[int] = set()
    calls = 0
    for step in result.steps:
        for i in step.changed_indices:
            ctx.change(i)
        ctx.advance(step.call_index)
        if step.call_index >= len(original) or original[step.call_index].role != "assistant":
            continue
        calls += 1
        lost = ctx.lost(replies[step.call_index])
        for i in sorted(lost):
            refs.append(LostReference(step.call_index, i, tuple(lost[i])))
            needed.add(i)
    counts = result.token_counts_original or result.token_counts
    return Losses(tuple(refs), tuple(sorted(needed)), sum(counts[i] for i in needed), calls, len(ctx.changed))
