"""What a policy loses: the results the agent needed after the policy had cleared them.

A recorded run shows what the agent used at each call: the terms of its reply. Replaying
a policy over the run shows which of those terms only a changed message still held in
the unreduced context, and no longer held in the context the policy leaves. Such a term
is strong evidence (not proof) that the reply depended on the changed message; the agent
would have had to fetch it again. The definition is fixed (see ``terms`` and ``pieces``);
the README says what it is and is not, and its measured precision.

Linear in the run: what does not depend on the policy (each message's pieces, which
messages hold each, how many precede each reply) is found once per run; a replay then
counts only the pieces of the messages its policy changed, and no call rescans the history.
"""

from __future__ import annotations

import collections
import heapq
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ..errors import ConfigError
from ..model import OMITTED, Message, Slot, memo_put
from .known import known_names, written_by_agent
from .refetch import REFETCHED, edits, path_of, refetched, result_paths
from .terms import (
    SUPPORT_LINE,
    WEAK_ALONE,
    _pieces_of_terms,
    message_terms,
    message_text,
    other_forms,
    pieces,
    terms,
    weak,
)

__all__ = ["Losses", "LostReference", "losses", "message_text", "pieces", "terms", "weak"]

@dataclass(frozen=True, slots=True)
class LostReference:
    """At model call ``call_index``, the reply used ``terms`` that only the changed
    message ``message_index`` (among others, perhaps) still held unreduced."""

    call_index: int
    message_index: int
    terms: tuple[str, ...]
    kind: str = "tool"
    """The role of the message charged: a tool result, or (masking clears them too) an
    assistant or user message."""


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
    judged: bool = True
    """False when the log holds no text of what the agent did (its replies hold no term
    and call nothing with arguments: redacted, or not captured): then "nothing needed"
    is not a finding, and the CLI, the app and the report say losses cannot be judged."""

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

    def needed_kinds(self) -> dict[str, int]:
        """How many needed messages of each kind: tool results, and the assistant or user
        messages a policy that masks them too (OpenHands') changed."""
        kinds: dict[int, str] = {}
        for r in self.references:
            kinds.setdefault(r.message_index, r.kind)
        out: dict[str, int] = {}
        for i in self.needed:
            k = kinds.get(i, "tool")
            out[k] = out.get(k, 0) + 1
        return out

    def needed_text(self) -> str:
        """The needed count said by kind: "12 tool results" or "12 (10 tool results, 2
        assistant messages)"; or that it cannot be judged."""
        if not self.judged:
            return "cannot be judged (the log holds no text of the agent's replies)"
        kinds = self.needed_kinds()
        names = {"tool": "tool result(s)", "assistant": "assistant message(s)", "user": "user message(s)"}
        parts = [f"{n:,} {names.get(k, k + ' message(s)')}" for k, n in sorted(kinds.items(), key=lambda kv: kv[0] != "tool")]
        if len(parts) == 1:
            return parts[0]
        return f"{len(self.needed):,} ({', '.join(parts)})" if parts else "0"

    def per_100_calls(self) -> float:
        """Needed results per 100 model calls: the loss rate a budget is stated in."""
        return 100 * len(self.needed) / self.calls if self.calls else 0.0


@dataclass
class _RunFacts:
    """What every replay of one run shares, whatever the policy: the terms any reply can
    use (every assistant message's), each message's pieces among them, which messages
    hold each piece, and at each reply the terms the unreduced context held there with
    how many of its messages held each. Kept on the run's first message, as token counts
    are kept on each message, so a sweep of many settings over a run cuts its texts into
    pieces once, and a replay's losses only look at what its policy changed."""

    last: Message
    n: int
    among: frozenset[str]
    by_text: dict[str, frozenset[str]]
    by_terms: dict[frozenset[str], frozenset[str]]
    pieces: list[frozenset[str]]
    holders: dict[str, list[int]]
    """Piece -> the messages whose original text holds it, ascending."""
    candidates: dict[int, tuple[Candidate, ...]]
    """Reply index -> (term, messages before it that hold it, and for each of its other
    forms that some message before it holds, that form and how many hold it:
    ``other_forms``), for its terms held there."""
    replies: bytes
    """Per message, 1 for an assistant message: the replies a call can be looked at for
    (a byte each: a set of their indices held 7 MB of a 200,000-message run)."""
    refetch: tuple[Sequence[int], Sequence[int]] | None = None
    """Every (call, the earlier result it fetches again): found when first asked
    (``_refetch_pairs``)."""
    drawn: dict[tuple[Any, ...], int] = field(default_factory=dict)
    """(reply, the latest holders of a term it used) -> the one it drew from (-1: none, by
    lines copied; the term then decides): the same for every
    replay of the run (a term is lost only when all its holders are changed), so found
    once, when first asked."""
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """A reply's term -> its other forms in sight (``other_forms``)."""
    paths: dict[int, str] | None = None
    """Result index -> the file its call named (``result_paths``): found when first asked."""
    lines_at: tuple[int, list[str], dict[int, int]] | None = None
    """The reply last looked at by name (``_charged_by_name``): its index, its lines, and
    per holder how many of its terms the holder holds."""
    said: dict[str, int] = field(default_factory=dict)
    """Term -> the first message in the agent's own words that holds it (``said_at``)."""

    def said_at(self, term: str, original: Sequence[Message]) -> int:
        """The first holder of ``term`` that is the agent's own words: a reply of its own,
        or a summary its log's compaction wrote; -1 when none."""
        got = self.said.get(term)
        if got is None:
            got = self.said[term] = next((h for h in self.holders[term] if original[h].role == "assistant"
                                          or (original[h].meta or {}).get("compaction")), -1)
        return got

    def result_paths(self, original: Sequence[Message]) -> dict[int, str]:
        if self.paths is None:
            self.paths = result_paths(original)
        return self.paths


def _pieces_among(m: Message, by_text: dict[str, frozenset[str]], by_terms: dict[frozenset[str], frozenset[str]],
                  among: frozenset[str]) -> frozenset[str]:
    """A message's pieces that some reply's terms could match (only those are ever asked
    about); the same terms (a file read twice) are cut into pieces once."""
    found = message_terms(m, by_text)
    got = by_terms.get(found)
    if got is None:
        got = by_terms[found] = frozenset(_pieces_of_terms(found) & among) if among and found else frozenset()
    return got


def _run_facts(original: Sequence[Message]) -> _RunFacts:
    memo = original[0]._memo if original else {}
    facts = memo.get(_RUN_KEY)
    if isinstance(facts, _RunFacts) and facts.n == len(original) and facts.last is original[-1]:
        return facts
    by_text: dict[str, frozenset[str]] = {}
    used = frozenset().union(*(message_terms(m, by_text) for m in original if m.role == "assistant"))
    bases = {t: b for t in used if (b := other_forms(t))}
    among = used | frozenset(f for forms in bases.values() for f in forms)
    by_terms: dict[frozenset[str], frozenset[str]] = {}
    held: list[frozenset[str]] = []
    holders: dict[str, list[int]] = defaultdict(list)
    candidates: dict[int, tuple[Candidate, ...]] = {}
    last_use: dict[str, int] = {}  # term -> the last reply that uses it
    for i, m in enumerate(original):
        if m.role == "assistant":
            found = message_terms(m, by_text)
            last_use.update(dict.fromkeys(found, i))
            last_use.update((f, i) for t in found if t in bases for f in bases[t])
    # the agent's own: its tools' names, and terms it wrote before any other message held
    # them (a name it chose, an option of its tool): no result told it those
    own_names = known_names(original)
    written = written_by_agent(original)
    for i, m in enumerate(original):
        if m.role == "assistant":
            before = [(t, len(holders[t]), tuple((f, len(holders[f])) for f in bases.get(t, ()) if f in holders))
                      for t in sorted(message_terms(m, by_text))
                      if t in holders and t not in own_names and t.partition(".")[0] not in own_names
                      and written.get(t, i) >= i and original[holders[t][0]].role != "assistant"]
            if before:
                candidates[i] = tuple(before)
        own = _pieces_among(m, by_text, by_terms, among)
        if own:  # only what a later reply uses can ever be lost: nothing else is counted
            own = frozenset(p for p in own if last_use[p] > i)
            for p in own:
                holders[p].append(i)
        held.append(own)
    facts = _RunFacts(original[-1] if original else Message("user"), len(original), among, by_text, by_terms,
                      held, dict(holders), candidates,
                      bytes(m.role == "assistant" for m in original), bases=bases)
    if original:
        memo_put(original[0], _RUN_KEY, facts)
    return facts


_RUN_KEY = Slot.LOST_RUN

# counts a set's elements into a dict in C (what Counter.update does after its checks)
_count: Callable[[dict[str, int], Iterable[str]], None] = getattr(collections, "_count_elements", None) or (
    lambda counts, items: counts.update({x: counts.get(x, 0) + 1 for x in items}))


def losses(result: Any, messages: Sequence[Message] | None = None) -> Losses:
    """The losses of a replay (``toolclear.replay`` of any policy). ``messages`` are the
    run as recorded; by default the ones the replay was given. A single pass loses
    nothing by this measure: no reply comes after it."""
    if getattr(result, "mode", "replay") != "replay":
        return Losses((), (), 0)  # one pass at the end of the run: no later reply to need anything
    memo = getattr(result, "__dict__", None)
    if messages is None and memo is not None and isinstance(memo.get(_RESULT_KEY), Losses):
        return memo[_RESULT_KEY]  # a result is immutable: its losses are found once
    from .._gc import paused_gc

    with paused_gc():  # counts, lists and references: no cycles
        found = _losses(result, messages)
    if messages is None and memo is not None:
        memo[_RESULT_KEY] = found
    return found


_RESULT_KEY = "_lost"
_STRETCH = 16
"""A step that leaves out more messages than this is taken as one stretch."""


def _all_changed(term: str, u: int, holders: dict[str, list[int]], entered: bytearray, low: int,
                 ok: dict[str, int]) -> bool:
    """Whether the first ``u`` holders of ``term`` are all changed (``_lost_at``'s test)."""
    j = ok.get(term, 0)
    if j < u:
        held_by = holders[term]
        if held_by[u - 1] < low:
            j = u
        else:
            if held_by[j] < low:
                j = bisect_left(held_by, low, j, u)
            while j < u and entered[held_by[j]]:
                j += 1
        ok[term] = j
    return j >= u


def _in_sight(forms_held: tuple[tuple[str, int], ...], forms: dict[str, int], holders: dict[str, list[int]],
              entered: bytearray, low: int, ok: dict[str, int]) -> bool:
    """Whether one of a term's other forms (each with its holders before the reply) is
    still in the context: held by an unchanged message or by a changed one's new form."""
    for f, n in forms_held:
        if f in forms or (holders[f][n - 1] >= low and not _all_changed(f, n, holders, entered, low, ok)):
            return True
    return False


Candidate = tuple[str, int, tuple[tuple[str, int], ...]]
"""A reply's term, how many messages before it hold it, and its other forms held there."""


def _lost_at(candidates: Iterable[Candidate], entered: bytearray, low: int, ok: dict[str, int],
             forms: dict[str, int], holders: dict[str, list[int]], k: int, original: Sequence[Message],
             facts: _RunFacts, summarised: bool = False) -> dict[int, list[str]]:
    """At one reply: changed message -> the reply's terms that only its original held. A
    term ``u`` earlier messages held is lost when all ``u`` are changed (``entered``) and
    no changed form holds it; it is charged to the one of them the reply drew from
    (``_drawn_from``: the longest span of lines shared with the reply, the latest on a tie).
    ``ok[term]``: how many of its first holders are known changed (only ever grows, as
    changes do: each holder is looked at once over the run); ``low``: every message before
    it is changed (a compaction changes a whole stretch). A term in sight in another form
    (``v``: each form and its holders; ``other_forms``) is not lost."""
    lost: dict[int, list[str]] = {}
    spans: dict[int, list[int]] = {}
    ok_of, drawn = ok.get, facts.drawn
    for term, u, v in candidates:
        # _all_changed, inlined: this runs for every term of every reply (300,000 on the 100k
        # benchmark), and the call alone made the losses of a replay about 10 % slower
        j = ok_of(term, 0)
        if j < u:
            held_by = holders[term]
            if held_by[u - 1] < low:  # every message before ``low`` is changed
                j = u
            else:
                if held_by[j] < low:
                    j = bisect_left(held_by, low, j, u)
                while j < u and entered[held_by[j]]:
                    j += 1
            ok[term] = j
            if j < u:
                continue  # a holder of it is still in the context as it was
        if v and _in_sight(v, forms, holders, entered, low, ok):
            continue  # in another form (explain.go for explain_test.go, src/x.py for repo/src/x.py)
        if term in forms:
            continue
        if summarised and 0 <= facts.said_at(term, original) < k:
            continue  # the agent's own words held it: a simulated summary carries what the agent said
        held_by = holders[term]
        if u == 1:
            got = held_by[0]
        else:
            # the same latest holders: one choice (a key built in one step: a compaction
            # loses tens of thousands of terms a run)
            latest = held_by[u - HOLDERS_COMPARED:u] if u > HOLDERS_COMPARED else held_by[:u]
            key = (k, *latest)
            got = drawn.get(key, -2)
            if got == -2:
                got = drawn[key] = _drawn_from(original[k], latest, original, spans, facts.result_paths(original))
            if got < 0:
                got = _charged_by_name(k, term, latest, original, facts)
        charged = lost.get(got)
        if charged is None:
            lost[got] = [term]
        else:
            charged.append(term)
    return _without_habits(lost, k, original, holders)


def _without_habits(lost: dict[int, list[str]], k: int, original: Sequence[Message],
                    holders: dict[str, list[int]]) -> dict[int, list[str]]:
    """``lost`` without the references that are a weak name or two alone (``weak``) with
    no distinctive line of the charged message copied: names written by habit."""
    for got in [g for g, found in lost.items() if len(found) < WEAK_ALONE and all(map(weak, found))]:
        if not _copies_a_line(k, got, lost[got], original, holders):
            del lost[got]
    return lost


BOILERPLATE_HOLDERS = 3
"""A line this many of a term's holders share is the language's or the library's habit
(``slog.String("error", err.Error()),``, ``tree, err := commit.Tree()``), not a copy of
one message."""


def _copies_a_line(k: int, got: int, found: Sequence[str], original: Sequence[Message],
                   holders: dict[str, list[int]]) -> bool:
    """Whether the reply holds a line of the charged message's text, of ``SUPPORT_LINE``
    characters or more, holding one of the terms, and held by fewer than
    ``BOILERPLATE_HOLDERS`` of that term's holders: a copy, not a name written by habit."""
    shared = _line_set(original[k]) & _line_set(original[got])
    for line in shared:
        if len(line) < SUPPORT_LINE:
            continue
        for t in found:
            held_by = holders.get(t, [])
            at = bisect_left(held_by, k)
            before = held_by[max(0, at - 8):at]  # the latest, before it
            if t in line and sum(1 for i in before if line in _line_set(original[i])) < BOILERPLATE_HOLDERS:
                return True
    return False


def _first_unchanged(entered: bytearray, low: int) -> int:
    """The first message from ``low`` on that is not yet changed."""
    found = entered.find(0, low)
    return len(entered) if found < 0 else found


MIN_LINE = 8
"""Lines shorter than this (braces, blank lines, ``return nil``) say nothing of where a
reply's text came from."""


_NUMBERED = re.compile(r"^[ \t]*\d+(?:→|\t)|^[\w./@-]+?[:-]\d+[:-]", re.MULTILINE)
"""A line's number as a tool prints it: Claude Code's Read (``  42→``), ``cat -n``
(``  42\t``), ``grep -n`` (``path:42:``, ``path-42-``); a reply copies the line, not it."""


def _lines(text: str) -> list[str]:
    text = _NUMBERED.sub("", text)  # one pass over the text, not one per line
    return [x for x in (line.strip() for line in text.splitlines()) if len(x) >= MIN_LINE]


def shared_span(reply: Sequence[str], holder: frozenset[str]) -> int:
    """The longest run of the reply's (stripped, non-trivial) lines that the holder's text
    also holds: how much of the reply was copied from it, line by line."""
    best = run = 0
    for line in reply:
        if line in holder:
            run += 1
            if run > best:
                best = run
        else:
            run = 0
    return best


HOLDERS_COMPARED = 4
MIN_SPAN = 3
"""A reply of fewer non-trivial lines is charged to the latest holder: one line of a
command or a name says nothing of which copy it came from."""
"""How many of a term's latest holders the span is measured against: an older copy was
superseded by the later ones (a run that compacted hundreds of times holds a path in
hundreds of dropped messages)."""


def _drawn_from(reply: Message, candidates: list[int], original: Sequence[Message],
                seen: dict[int, list[int]], paths: dict[int, str] | None = None) -> int:
    """Of several messages holding a term a reply used, the one it drew from: the read of
    the file the reply edits, when it shares a line with it; else the longest
    shared span of lines (an Edit's old_string copies the file it read, not the diff that
    quoted a hunk of it), the latest on a tie (an older read was superseded); -1 when the
    reply copies no line of any (prose, a short call): then the term decides
    (``_charged_by_name``). ``seen`` keeps, per holder, [lines shared, span (-1: not
    measured)] for this reply."""
    ordered, line_set = _lines_of(reply)
    if len(ordered) < MIN_SPAN:
        return -1
    edited = {p for c in reply.tool_calls if edits(c.name) and (p := path_of(c.arguments))}
    if edited and paths:  # an edit copies the file it edits: its read wins when it shares a line
        own = [i for i in candidates if paths.get(i, "") in edited and not line_set.isdisjoint(_line_set(original[i]))]
        if own:
            return own[-1]
    best, best_span = candidates[-1], 0
    shared = []
    for i in candidates[-HOLDERS_COMPARED:]:
        facts = seen.get(i)
        if facts is None:
            held = _line_set(original[i])
            facts = seen[i] = [0 if line_set.isdisjoint(held) else len(line_set & held), -1]
        shared.append((facts[0], i))
    shared.sort(reverse=True)
    # a span is at most the lines the two share: the most promising first, stop when none can win
    for most, i in shared:  # most shared first, the latest first among equals
        if most == 0 or most < best_span or (most == best_span and i < best):
            break  # none left can beat the best (a tie goes to the latest)
        facts = seen[i]
        if facts[1] < 0:
            facts[1] = shared_span(ordered, _line_set(original[i]))
        if (facts[1], i) > (best_span, best):
            best, best_span = i, facts[1]
    return best if best_span else -1


def _charged_by_name(k: int, term: str, latest: list[int], original: Sequence[Message], facts: _RunFacts) -> int:
    """The reply at ``k`` copied no line of any holder of ``term``: the holder whose file
    the reply's line names, else the one that holds most of the reply's other terms (a
    summary that quotes `SessionFilePath(checkpointID, paths.TranscriptFileName)` drew
    from the test that calls it, not from another file that names the constant), else the
    one that holds the term most often, else the latest."""
    at = facts.lines_at  # read once: another thread's replay may set it meanwhile
    if at is None or at[0] != k:
        at = facts.lines_at = (k, message_text(original[k]).splitlines(), {})
    got = _named_beside(at[1], term, latest, facts.result_paths(original))
    if got >= 0:
        return got
    shared, mine = at[2], message_terms(original[k])
    for i in latest:
        if i not in shared:
            shared[i] = len(mine & message_terms(original[i]))
    return max(latest, key=lambda i: (shared[i], _occurrences(original[i], term), i))


def _named_beside(reply_lines: list[str], term: str, holders: list[int], paths: dict[int, str]) -> int:
    """The holder whose file the reply names on a line that uses ``term`` ("Phase state
    machine (ACTIVE, ACTIVE_COMMITTED, IDLE, ENDED) matches `session/phase.go`": the
    read of phase.go, not another file that mentions the state), by the longest tail of
    its path named; -1 when the reply names none of their files there."""
    named = [(i, paths[i]) for i in holders if i in paths]
    if not named:
        return -1
    best, best_len = -1, 0
    for line in reply_lines:
        if term not in line:
            continue
        for i, path in named:
            parts = path.split("/")
            for start in range(len(parts)):
                tail = "/".join(parts[start:])
                if len(tail) < best_len or "." not in parts[-1]:
                    break  # shorter tails cannot beat it; a name with no extension is no file name
                at = line.find(tail)
                if at >= 0 and (at == 0 or not (line[at - 1].isalnum() or line[at - 1] in "_-.")):
                    best, best_len = i, len(tail)  # the latest holder wins a tie (holders ascend)
                    break
    return best


def _occurrences(m: Message, term: str) -> int:
    """How often a message's text (and its calls' arguments) holds ``term``."""
    return m.content.count(term) + sum(c.arguments.count(term) for c in m.tool_calls)


def _lines_of(m: Message) -> tuple[list[str], frozenset[str]]:
    """The message's non-trivial lines, in order and as a set, worked out once per message."""
    hit = m._memo.get(Slot.LOST_LINES)
    if hit is None:
        words = _lines(message_text(m))
        hit = memo_put(m, Slot.LOST_LINES, (words, frozenset(words)))
    return hit


def _line_set(m: Message) -> frozenset[str]:
    return _lines_of(m)[1]


class _Entered:
    """The changed messages as the replay reaches them: which are changed, which have
    entered the context changed (``entered``, a message changed before it arrived enters
    when it does), and the pieces of their new forms in it (``forms``)."""

    __slots__ = ("final", "facts", "entered", "is_changed", "changed", "pending", "forms")

    def __init__(self, final: Sequence[Message], facts: _RunFacts) -> None:
        self.final, self.facts = final, facts
        self.entered = bytearray(len(final))
        self.is_changed = bytearray(len(final))
        self.changed = 0
        self.pending: list[int] = []  # changed before they entered the context
        self.forms: dict[str, int] = {}

    def take(self, cleared: Sequence[int], k: int) -> None:
        """A step's changes, at call ``k``."""
        final, n, is_changed, entered = self.final, len(self.final), self.is_changed, self.entered
        if len(cleared) > _STRETCH and 0 <= min(cleared) and max(cleared) < min(k, n) and \
                all(final[i].role == OMITTED for i in cleared):
            # a compaction leaves a whole stretch out: entered at once, no form of it sent
            fresh = [i for i in cleared if not is_changed[i]]
            self.changed += len(fresh)
            for i in fresh:
                is_changed[i] = entered[i] = 1
        elif cleared:
            for i in cleared:
                if not 0 <= i < n or is_changed[i]:
                    continue
                is_changed[i] = 1
                self.changed += 1
                if i >= k:
                    heapq.heappush(self.pending, i)
                else:
                    self.enter(i)
        pending = self.pending
        while pending and pending[0] < k:
            self.enter(heapq.heappop(pending))

    def enter(self, i: int) -> None:
        self.entered[i] = 1
        f = self.final[i]
        if f.role != OMITTED:  # left out of the request (a compaction): no form of it is sent
            facts = self.facts
            form = _pieces_among(f, facts.by_text, facts.by_terms, facts.among)
            if form:
                _count(self.forms, form)


def _losses(result: Any, messages: Sequence[Message] | None) -> Losses:
    """One pass over the replay's steps. The unreduced side is the run's (``_RunFacts``);
    the policy's side is two running counts: the pieces of changed messages in the
    context as they were (``entered``) and as the policy left them (``forms``). A reply's
    term held by ``u`` earlier messages is lost when all ``u`` are changed and no changed
    form holds it."""
    original = tuple(messages) if messages is not None else tuple(getattr(result, "_seen", ()) or ())
    if not original and result.messages:
        raise ConfigError("losses: the replay holds no original messages; pass messages=")
    if len(original) != len(result.messages):
        raise ConfigError(f"losses: {len(original)} original messages for a replay of {len(result.messages)}")
    facts = _run_facts(original)
    final, candidates, holders, replies = result.messages, facts.candidates, facts.holders, facts.replies
    seen = _Entered(final, facts)
    entered, forms = seen.entered, seen.forms
    low = 0
    # a simulated compaction (a stand-in summary): what the agent said before it is carried
    # by the summary a real compaction would write, as the recorded ones do
    summarised = any("stands_for_tokens" in meta for meta in filter(None, map(attrgetter("meta"), final)))
    ok: dict[str, int] = {}
    refs: list[LostReference] = []
    needed: set[int] = set()
    calls = 0
    pending = seen.pending
    for k, cleared in result.step_changes():
        if cleared or pending:  # most calls change nothing: no call into take for them
            seen.take(cleared, k)
        if k >= len(replies) or not replies[k]:
            continue
        calls += 1
        terms = candidates.get(k)
        if not terms or not seen.changed:
            continue
        low = _first_unchanged(entered, low)
        lost = _lost_at(terms, entered, low, ok, forms, holders, k, original, facts, summarised)
        if lost:
            for i in sorted(lost):
                refs.append(LostReference(k, i, tuple(lost[i]), original[i].role))
                needed.add(i)
    changed = seen.changed
    return _with_refetches(result, original, refs, needed, calls, changed,
                           judged=not changed or bool(facts.among) or any(m.tool_calls for m in original))


def _with_refetches(result: Any, original: Sequence[Message], refs: list[LostReference], needed: set[int],
                    calls: int, changed: int, *, judged: bool = True) -> Losses:
    """The losses found by the terms, with each re-fetch added (``_refetched``). ``judged``
    is False when nothing the agent did is in the log to look for."""
    for k, i in refetched(original, result.cleared_at, _run_facts(original)):
        refs.append(LostReference(k, i, (REFETCHED,), original[i].role))
        needed.add(i)
    refs.sort(key=lambda r: (r.call_index, r.message_index))
    counts = result.token_counts_original or result.token_counts
    return Losses(tuple(refs), tuple(sorted(needed)), sum(counts[i] for i in needed), calls, changed, judged)
