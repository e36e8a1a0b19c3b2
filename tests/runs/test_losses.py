"""toolclear.losses: each rule of the definition, a naive implementation of it written
straight from the issue's text (contexts rebuilt at every call), and its properties."""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear.runs.terms import (
    _CONVENTIONS,
    _GO_STD,
    _KNOWN_FILES,
    _PLACEHOLDER,
    derived_from,
    message_text,
    other_forms,
    pieces,
    terms,
)

from ..conftest import CORPUS, hypothesis_examples

# ------------------------------------------------------------------ the rules, one by one


def test_terms_are_identifier_like_runs() -> None:
    assert terms("see src/app/main.py:42 and foo_bar and getUserName") == {"src/app/main.py:42", "getUserName"}
    assert terms("plainwords everywhere here") == set()  # no digit, _, /, ., : or camel hump
    assert terms("short_1") == set()  # under 8
    assert terms("x" * 201 + "_1") == set()  # a blob, not a term
    assert terms("...config.yaml:") == {"config.yaml"}  # stripped of . / : - at both ends
    assert terms("fmt.Errorf t.Parallel np.array os.path.join json.loads") == set()  # the language
    assert terms("collections.OrderedDict") == set()  # a stdlib module heads it
    assert terms("noqa:E501 nolint:errcheck type:ignore[attr]") == set()
    assert terms("myrepo.Storer.RemoveReference") == {"myrepo.Storer.RemoveReference"}


def naive_terms(text: str) -> set[str]:
    """The issue's rule read literally, one character at a time (no regular expression
    for the runs): what ``terms`` must equal on any text."""
    run_chars = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:-")
    language = set(sys.stdlib_module_names) | set(
        "np pd plt tf torch t tb b fmt os io ioutil strings strconv errors bytes json filepath path sort sync "
        "context http url exec regexp time testing math rand bufio log slog reflect runtime atomic".split())
    runs, current = [], ""
    for ch in text + " ":
        if ch in run_chars:
            current += ch
        elif current:
            runs.append(current)
            current = ""
    def plain_term(run: str) -> bool:
        signal = any(c.isdigit() or c in "_/.:" for c in run) or any(
            a.islower() and b.isupper() for a, b in zip(run, run[1:]))
        return (8 <= len(run) <= 200 and signal
                and not any(run.startswith(d) for d in ("nolint:", "noqa", "pylint:", "eslint-disable", "type:",
                                                        "go:build", "go:generate", "go:embed", "go:linkname"))
                and run.split(".")[0] not in language)

    def media_type(run: str) -> bool:
        kind, slash, sub = run.partition("/")
        return bool(slash and sub) and kind in ("text", "application", "image", "audio", "video", "multipart",
                                                 "font", "message") and all(
            c.islower() or c.isdigit() or c in ".+-" for c in sub)

    out = set()
    for run in runs:
        run = run.strip("./:-")
        def known(run: str) -> bool:  # the language's, git's, the agent's own files, placeholders
            return (run.split(".")[0] in _GO_STD or media_type(run) or run.split("/")[-1] in _KNOWN_FILES
                    or _PLACEHOLDER.fullmatch(run) is not None or run in _CONVENTIONS)

        if not plain_term(run) or known(run):
            continue
        for prefix in ("refs/remotes/origin/", "refs/remotes/", "refs/heads/", "refs/tags/", "origin/", "upstream/"):
            if run.startswith(prefix) and len(run) > len(prefix):
                run = run[len(prefix):]  # git's prefix: the branch is the term, if it is one
                break
        if plain_term(run) and not known(run):
            out.add(run)
    return out


@settings(max_examples=hypothesis_examples(400), deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "b", "Q", "0", "7", "_", ".", "/", ":", "-", " ", "\n", "(", "é",
                                 "os.", "np", "noqa", "type:", "fmt.Err", "getX", "Name", "abcdefgh", "x" * 199,
                                 "encoding/json", "text/html", "origin/", "refs/heads/", "feat_12"]),
                max_size=60).map("".join))
def test_terms_equal_the_rule_read_character_by_character(text: str) -> None:
    assert terms(text) == naive_terms(text)


def test_pieces_run_from_a_component_start_to_a_component_end() -> None:
    assert pieces("repo.Storer.RemoveReference") == {
        "repo.Storer.RemoveReference", "repo.Storer", "Storer.RemoveReference", "RemoveReference"}
    assert pieces("a/b/c/ddddddddd.py") == {"a/b/c/ddddddddd.py", "b/c/ddddddddd.py", "c/ddddddddd.py",
                                            "ddddddddd.py", "a/b/c/ddddddddd", "b/c/ddddddddd", "c/ddddddddd",
                                            "ddddddddd"}


def test_message_text_takes_tool_call_argument_values_not_keys() -> None:
    m = tc.Message(role="assistant", content="reading", tool_calls=(
        tc.ToolCall(id="1", name="read", arguments=json.dumps({"file_path": "src/x_y.py", "n": [1, "b_c_d_e_f"]})),
        tc.ToolCall(id="2", name="sh", arguments="not json at all_1"),
    ))
    text = message_text(m)
    assert "src/x_y.py" in text and "b_c_d_e_f" in text and "not json at all_1" in text
    assert "file_path" not in text
    assert message_text(tc.Message(role="user", content="u", tool_calls=())) == "u"


# ------------------------------------------------------------------ the naive reference


def read_path(original: list[tc.Message], i: int) -> str:
    """The file the call whose result message ``i`` is named ("" for none)."""
    call = next((x for m in original[:i] for x in m.tool_calls if x.id and x.id == original[i].tool_call_id), None)
    return path_of(call.arguments) if call is not None and original[i].role == "tool" else ""


def named_on_its_line(original: list[tc.Message], c: int, i: int, t: str) -> int:
    """How long a tail of the file message ``i``'s call read the reply at ``c`` names, as
    a whole name, on a line that holds ``t`` (0: none; a name needs an extension)."""
    path = read_path(original, i)
    if "." not in path.rsplit("/", 1)[-1]:
        return 0
    parts = path.split("/")
    tails = ["/".join(parts[k:]) for k in range(len(parts))]
    return max((len(tail) for line in message_text(original[c]).splitlines() if t in line for tail in tails
                if re.search(r"(?<![A-Za-z0-9_.\-])" + re.escape(tail), line)), default=0)


def naive(result: tc.Result, original: list[tc.Message]) -> tuple[set[tuple[int, int, tuple[str, ...]]], set[int]]:
    """The definition as written: at every call, rebuild both contexts from scratch."""
    from toolclear.runs.known import known_names, written_by_agent
    from toolclear.runs.terms import weak

    tool_names = known_names(original)  # its tools, their options, the libraries its code imports
    written = written_by_agent(original)  # the files it wrote and the names in what it wrote, from the first
    changed_by: dict[int, int] = {}
    refs = set()
    # a simulated compaction: a term the agent's own words held (its replies, a summary its
    # log's compaction wrote) before the reply is carried by the summary
    summarised = any(m.meta and "stands_for_tokens" in m.meta for m in result.messages)

    def said(t: str, c: int) -> bool:
        return any(t in pieces(message_text(original[i])) and (original[i].role == "assistant" or (
            original[i].meta or {}).get("compaction")) for i in range(c))

    for k, step in enumerate(result.steps):
        for i in step.cleared_indices:
            changed_by.setdefault(i, k)
        c = step.call_index
        if c >= len(original) or original[c].role != "assistant":
            continue
        changed = {i for i, at in changed_by.items() if at <= k}
        unreduced = set().union(*(pieces(message_text(m)) for m in original[:c])) if c else set()
        reduced = set().union(*(pieces(message_text(result.messages[i] if i in changed else original[i]))
                                for i in range(c))) if c else set()
        lost = {t for t in terms(message_text(original[c])) if t in unreduced and t not in reduced
                and not any(f in reduced for f in other_forms(t))  # in sight in another form: not lost
                and t not in tool_names and t.split(".")[0] not in tool_names  # known without a result
                and written.get(t, c) >= c  # not a file it wrote before
                and not (summarised and said(t, c))
                # the agent's own: it wrote the term before any other message held it
                and original[next(i for i in range(c) if t in pieces(message_text(original[i])))].role != "assistant"}
        charged: dict[int, list[str]] = {}
        reply = lines(message_text(original[c]))
        for t in lost:  # to the holder the reply shares the longest run of lines with, the latest on a tie
            held = [i for i in range(c) if t in pieces(message_text(original[i]))][-4:]  # the latest 4
            span = {i: longest_run(reply, set(lines(message_text(original[i])))) if len(reply) >= 3 else 0
                    for i in held}
            edited = {changes(x) for x in original[c].tool_calls} - {None, ""}
            own = [i for i in held if len(reply) >= 3 and read_path(original, i) in edited
                   and set(reply) & set(lines(message_text(original[i])))]
            if own:  # an edit copies the file it edits: the read of that file, when they share a line
                best = own[-1]
            elif max(span.values()) > 0:
                best = max(reversed(held), key=lambda i: span[i])
            elif named := {i: n for i in held if (n := named_on_its_line(original, c, i, t))}:
                # nothing copied, but the reply's line using it names a holder's file: that one
                # (the longest tail of its path named, the latest on a tie)
                best = max(named, key=lambda i: (named[i], i))
            else:  # nothing copied: the holder that holds most of the reply's terms, then the
                # term most often, the latest on a tie
                mine = terms(message_text(original[c]))
                best = max(held, key=lambda i: (len(mine & terms(message_text(original[i]))),
                                                original[i].content.count(t) + sum(
                                                    x.arguments.count(t) for x in original[i].tool_calls), i))
            charged.setdefault(best, []).append(t)
        for i, mine in charged.items():
            copied = set(lines(message_text(original[c]))) & set(lines(message_text(original[i])))

            def distinctive(x: str, t: str, c: int = c) -> bool:  # fewer than 3 of t's latest 8 holders hold x
                held = [j for j in range(c) if t in pieces(message_text(original[j]))][-8:]
                return sum(1 for j in held if x in set(lines(message_text(original[j])))) < 3

            if len(mine) < 3 and all(weak(t) for t in mine) and not any(
                    len(x) >= 24 and any(t in x and distinctive(x, t) for t in mine) for x in copied):
                continue  # a name or two written by habit, nothing of the message copied
            refs.add((c, i, tuple(sorted(mine))))
    refs |= naive_refetches(result, original)
    return refs, {i for _, i, _ in refs}


def lines(text: str) -> list[str]:
    """Non-trivial lines, each without the number a tool printed before it (Read's
    ``  42→``, ``cat -n``, ``grep -n``'s ``path:42:``)."""
    out = []
    for x in text.splitlines():
        x = re.sub(r"^\s*\d+(?:→|\t)|^[\w./@-]+?[:-]\d+[:-]", "", x, count=1).strip()
        if len(x) >= 8:
            out.append(x)
    return out


def longest_run(reply: list[str], held: set[str]) -> int:
    best = 0
    for a in range(len(reply)):
        b = a
        while b < len(reply) and reply[b] in held:
            b += 1
        best = max(best, b - a)
    return best


def path_of(arguments: str) -> str:
    try:
        args = json.loads(arguments)
    except ValueError:
        return ""
    for key in ("file_path", "path", "filename", "file", "absolute_path", "target_file"):
        if isinstance(args, dict) and isinstance(args.get(key), str) and args[key]:
            return args[key]
    return ""


def changes(call: tc.ToolCall) -> str | None:
    """The file a call writes ("" for any: a shell command or a write naming no file)."""
    low = call.name.lower()
    if any(w in low for w in ("write", "edit", "replace", "create", "patch", "insert", "delete", "move", "rename")):
        return path_of(call.arguments)
    if any(w in low for w in ("bash", "shell", "exec", "run", "command", "terminal")):
        return ""
    return None


def naive_refetches(result: tc.Result, original: list[tc.Message]) -> set[tuple[int, int, tuple[str, ...]]]:
    """A re-fetch, as written: a call whose tool and arguments (or, for a read, file) are
    those of the latest earlier result with them, made while that result was changed,
    with nothing between them that changed what it fetches (a write to that file; for a
    repeated call, a command or a write naming no file)."""
    def keys(call: tc.ToolCall) -> set[tuple[str, str]]:
        if any(w in call.name.lower() for w in ("read", "view", "open", "cat", "get_file")) and path_of(call.arguments):
            return {("<file>", path_of(call.arguments))}
        return {(call.name, " ".join(call.arguments.split()))}

    calls = {c.id: c for m in original if m.role == "assistant" for c in m.tool_calls if c.id}
    refs, charged = set(), set()
    for k, m in enumerate(original):
        if m.role != "assistant":
            continue
        for call in m.tool_calls:
            if changes(call) not in (None, "") or any(w in call.name.lower() for w in (
                    "write", "edit", "replace", "create", "patch", "insert", "delete", "move", "rename")):
                continue  # a write made again fetches nothing
            for key in keys(call):
                earlier = [i for i in range(k) if original[i].role == "tool" and original[i].tool_call_id in calls
                           and key in keys(calls[original[i].tool_call_id])
                           and not original[i].content.lstrip().startswith((  # a failed call fetched nothing
                               "<tool_use_error>", "<system-reminder>Warning: the file exists but is shorter",
                               "Error: ", "File does not exist"))]
                if not earlier:
                    continue
                i = earlier[-1]
                between = [x for j in range(i + 1, k) if original[j].role == "assistant"
                           for x in original[j].tool_calls]
                if key[0] == "<file>" and any(changes(x) == key[1] for x in between):
                    continue  # the file was written since: reading it again reads new content
                if key[0] != "<file>" and any(changes(x) is not None for x in between):
                    continue  # a command or a write since may have changed what the call returns
                at = result.cleared_at[i]
                if at is not None and at <= k and i not in charged:
                    charged.add(i)
                    refs.add((k, i, ("(fetched again)",)))
    return refs


REAL = [CORPUS / "claude_code" / n for n in (
    "entire-cli_cc-2.1.4_task-skill-askuser_d3-7d736cbc10.jsonl",
    "entire-cli_cc-2.0.76_background-tasks_f8-10e13fce67.jsonl",
    "entire-cli_cc-2.1.36_progress-events_91-b42542f24f.jsonl")] + [
    CORPUS / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj",
    CORPUS / "openai_chat" / "mini-swe-agent_deepseek-chat_marshmallow-1343.traj.json"]
POLICIES = [tc.ClearToolResultConfig(5_000, 10_000), tc.ObservationMaskingConfig.swe_agent(n=3),
            tc.AnthropicClearToolUsesConfig(trigger_input_tokens=10_000, keep_tool_uses=2),
            tc.LangChainClearToolUsesConfig(trigger=8_000, keep=2)]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_losses_equal_the_definition_rebuilt_at_every_call(path) -> None:
    t = tc.load_all(path)[0]
    found = 0
    for config in POLICIES:
        r = tc.replay(t.messages, config)
        lost = tc.losses(r)
        refs, needed = naive(r, list(t.messages))
        assert {(x.call_index, x.message_index, x.terms) for x in lost.references} == refs
        assert set(lost.needed) == needed and list(lost.needed) == sorted(lost.needed)
        counts = r.token_counts_original or r.token_counts
        assert lost.refetch_tokens == sum(counts[i] for i in needed)
        found += len(needed)
    if path.parent.name == "claude_code":
        assert found > 0  # these runs do lose something under these policies


def test_cost_prices_the_refetch_as_uncached_input() -> None:
    t = tc.load_all(REAL[0])[0]
    r = tc.replay(t.messages, tc.ClearToolResultConfig(5_000, 10_000))
    c = tc.cost(r, "claude-sonnet-4-5")
    assert c.refetch_tokens == tc.losses(r).refetch_tokens > 0
    assert c.refetch_dollars == pytest.approx(c.refetch_tokens * c.scale * 3.0 / 1e6)
    assert c.net_dollars_saved == pytest.approx(c.dollars_saved - c.refetch_dollars)
    table = tc.compare(t.messages, [r.config], pricing="claude-sonnet-4-5").table
    assert int(table["needed_results"].iloc[0]) == len(tc.losses(r).needed)
    assert table["net_dollars_saved"].iloc[0] == pytest.approx(round(c.net_dollars_saved, 6))


# ------------------------------------------------------------------ properties

WORDS = ["src/app/main_1.py", "repo.Storer.RemoveReference", "getUserName", "build_42", "plain", "words",
         "config.yaml:12", "a_b_c_d_e"]


@st.composite
def runs(draw):
    msgs = [tc.Message(role="system", content=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=3))))]
    for k in range(draw(st.integers(1, 8))):
        words = draw(st.lists(st.sampled_from(WORDS), max_size=4))
        msgs.append(tc.Message(role="user", content=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=2)))))
        msgs.append(tc.Message(role="assistant", content=" ".join(words), tool_calls=(
            tc.ToolCall(id=f"c{k}", name="read", arguments=json.dumps({"p": draw(st.sampled_from(WORDS))})),)))
        msgs.append(tc.Message(role="tool", tool_call_id=f"c{k}", tool_name="read",
                               content=" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))))
    msgs.append(tc.Message(role="assistant", content=" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=4)))))
    return msgs


@settings(max_examples=hypothesis_examples(60), deadline=None)
@given(runs(), st.integers(0, 3))
def test_a_policy_that_changes_nothing_loses_nothing(msgs, keep) -> None:
    r = tc.replay(msgs, tc.ClearToolResultConfig(10**9, 10**9))
    assert not r.cleared_indices and tc.losses(r).references == ()


@settings(max_examples=hypothesis_examples(60), deadline=None)
@given(runs(), st.integers(0, 4), st.integers(0, 4))
def test_clearing_more_never_loses_fewer_terms(msgs, a, b) -> None:
    """With a placeholder holding no term, keeping fewer results (a superset cleared at
    each call) never loses fewer terms at any call."""
    few, many = max(a, b), min(a, b)
    lost = {}
    for keep in (few, many):
        r = tc.replay(msgs, tc.ObservationMaskingConfig.swe_agent(n=max(keep, 1)))
        by_call: dict[int, set[str]] = {}
        for ref in tc.losses(r).references:
            by_call.setdefault(ref.call_index, set()).update(ref.terms)
        lost[keep] = by_call
    for call, words in lost[few].items():
        assert words <= lost[many].get(call, set())


@settings(max_examples=hypothesis_examples(60), deadline=None)
@given(runs())
def test_terms_only_in_the_system_prompt_or_user_turns_are_never_lost(msgs) -> None:
    r = tc.replay(msgs, tc.ObservationMaskingConfig.swe_agent(n=1))
    for ref in tc.losses(r).references:  # what the context held in a system or user turn at that call
        kept = set().union(*(pieces(m.content) for m in msgs[:ref.call_index] if m.role in ("system", "user")))
        assert not set(ref.terms) & kept


def test_the_language_list_is_the_issues() -> None:
    assert "json" in sys.stdlib_module_names
    assert terms("slog.Info_1 atomic.AddInt64 runtime.GOMAXPROCS") == set()
    assert re.fullmatch(r"[\w./:-]+", "a.b")


def test_the_sweep_has_a_loss_grid_beside_the_savings() -> None:
    from toolclear.runs import sweep

    t = tc.load_all(REAL[0])[0]
    sw = sweep.sweep(t.messages, tc.ClearToolResultConfig(), [0, 5_000], [5_000, 20_000], mode="replay")
    for i, th in enumerate(sw.thresholds):
        for j, keep in enumerate(sw.keeps):
            r = tc.replay(t.messages, tc.ClearToolResultConfig(th, keep))
            assert sw.needed[i][j] == len(tc.losses(r).needed)
    assert any(v for row in sw.needed for v in row)


def _run_of(*steps: tuple[str, str, str]) -> list[tc.Message]:
    """A run of (tool, arguments, result) calls, one per reply."""
    msgs = [tc.Message("user", "go")]
    for k, (tool, args, out) in enumerate(steps):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", tool, args),)),
                 tc.Message("tool", out, tool_call_id=f"c{k}")]
    return msgs + [tc.Message("assistant", "done")]


def test_reading_a_file_again_after_writing_it_is_not_a_refetch() -> None:
    read = ("Read", '{"file_path": "/src/a.py"}', "def a():\n    return 1\n" * 40)
    msgs = _run_of(read, ("Edit", '{"file_path": "/src/a.py", "old_string": "1", "new_string": "2"}', "ok"),
                   ("Grep", '{"pattern": "x"}', "none " * 200), read)
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert r.cleared_at[2] is not None and r.cleared_at[2] <= 7
    assert not [x for x in tc.losses(r).references if x.terms == ("(fetched again)",)]
    same = _run_of(read, ("Grep", '{"pattern": "x"}', "none " * 200), ("Grep", '{"pattern": "y"}', "none " * 200),
                   read)
    r2 = tc.replay(same, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert [(x.call_index, x.message_index) for x in tc.losses(r2).references if x.terms == ("(fetched again)",)] \
        == [(7, 2)]


def test_a_write_made_again_and_a_command_run_again_after_an_edit_are_not_refetches() -> None:
    """Real cases (Claude Code, entireio/cli): an Edit refused ("File has not been read
    yet") and made again; `mise run test` run again after the fix was edited in. Neither
    fetched back what was cleared."""
    clear = tc.parse_policy("eino:threshold=1,keep_recent_tokens=1")
    edit = ("Edit", '{"file_path": "/src/a.go", "old_string": "x", "new_string": "y"}',
            "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>")
    msgs = _run_of(edit, ("Read", '{"file_path": "/src/a.go"}', "package a\n" * 80), edit)
    r = tc.replay(msgs, clear)
    assert r.cleared_at[2] is not None and r.cleared_at[2] <= 5
    assert not [x for x in tc.losses(r).references if x.terms == ("(fetched again)",)]
    test = ("Bash", '{"command": "mise run test 2>&1"}', "--- FAIL: TestShadow (0.22s)\n" * 40)
    msgs = _run_of(test, ("Edit", '{"file_path": "/src/a.go", "old_string": "x", "new_string": "y"}', "ok"), test)
    r = tc.replay(msgs, clear)
    assert r.cleared_at[2] is not None and r.cleared_at[2] <= 5
    assert not [x for x in tc.losses(r).references if x.terms == ("(fetched again)",)]


def test_the_agents_own_notation_and_its_tools_names_are_not_lost() -> None:
    """Real cases (Claude Code): `files_with_matches` is an option the agent itself passed
    to Grep; `NodeTypeCheckpoint` a name it chose in its own Write; `ExitPlanMode` one of
    its tools. A later reply using them drew on nothing a result told it."""
    m, call = tc.Message, tc.ToolCall
    msgs = [m("user", "add a tree view"),
            m("assistant", "", tool_calls=(call("g", "Grep", '{"pattern": "huh", "output_mode": "files_with_matches"}'),)),
            m("tool", "cmd/entire/cli/reset.go", tool_call_id="g"),
            m("assistant", "", tool_calls=(call("w", "Write", '{"file_path": "/t.go", "content": "case '
                                                     'NodeTypeCheckpoint:"}'),)),
            m("tool", "File created successfully at: /t.go\n  39  case NodeTypeCheckpoint:", tool_call_id="w"),
            m("assistant", "", tool_calls=(call("p", "ExitPlanMode", '{"plan": "x"}'),)),
            m("tool", "User approved ExitPlanMode", tool_call_id="p")]
    for k in range(4):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", "none " * 30, tool_call_id=f"b{k}")]
    msgs.append(m("assistant", "Type: NodeTypeCheckpoint; then ExitPlanMode", tool_calls=(
        call("g2", "Grep", '{"pattern": "cmd", "output_mode": "files_with_matches"}'),)))
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert {2, 4, 6} <= set(r.cleared_indices)
    assert not tc.losses(r).references
    # the same name learned from a result is lost when the result is cleared
    msgs[4] = m("tool", "existing: case NodeTypeKnownBefore:", tool_call_id="w")
    msgs[-1] = m("assistant", "Type: NodeTypeKnownBefore")
    lost = tc.losses(tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1")))
    assert [(x.message_index, x.terms) for x in lost.references] == [(4, ("NodeTypeKnownBefore",))]


def test_a_habits_name_alone_is_lost_only_with_a_line_copied() -> None:
    """Real cases: `repo.Worktree()` and `sb.WriteString` written from go-git and Go habit,
    `maxCommits` and `shadowBranch` as local names, charged to files that merely held them;
    three or more such names from one file, or a line of it copied, still count."""
    from toolclear.runs.terms import weak

    assert all(weak(t) for t in ("repo.Worktree", "sb.WriteString", "c.Hash.String", "maxCommits", "sessionID",
                                 "created_at", "current.Parent", "MergeBase", "staging/committing", "utils.go",
                                 # round 5: a generic field and go-git's worktree.Status(), named by habit
                                 "SessionID", "worktree.Status"))
    assert not any(weak(t) for t in ("PreToolUse", "sessionHasNewContent", "checkpoint_count_total",
                                      "cmd/entire/cli/a.go", "meta.SessionID"))
    m, call = tc.Message, tc.ToolCall

    def run(read: str, reply: str) -> tc.Losses:
        msgs = [m("user", "go"), m("assistant", "", tool_calls=(call("r", "Read", '{"file_path": "/s.go"}'),)),
                m("tool", read, tool_call_id="r")]
        for k in range(3):
            msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                     m("tool", "none " * 30, tool_call_id=f"b{k}")]
        msgs.append(m("assistant", reply))
        r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
        assert r.cleared_at[2] is not None  # the file read is cleared before the reply
        return tc.losses(r)

    read = "func f() {\n\twt, err := repo.Worktree()\n\tconst maxCommits = 100\n\tcount := 0\n}\n"
    assert not run(read, "tree, err = repo.Worktree() // again\nfor i := 0; i < maxCommits; i++ {").references
    copied = run(read, "\twt, err := repo.Worktree()\n\tconst maxCommits = 100\n")
    assert [x.terms for x in copied.references] == [("maxCommits", "repo.Worktree")]
    three = run("agentType, baseCommit, transcriptPath string", "use agentType and baseCommit and transcriptPath")
    assert [len(x.terms) for x in three.references] == [3]


def test_instruction_files_and_manifests_are_known_to_the_agent() -> None:
    """Real case: the agent quotes its CLAUDE.md, which a plan it read also named."""
    assert not tc.runs.terms.terms("The CLAUDE.md says so; see docs/CLAUDE.md and web/package.json")
    assert tc.runs.terms.terms("edit cmd/entire/cli/explain.go") == {"cmd/entire/cli/explain.go"}


def test_a_repeated_command_after_another_command_is_not_a_refetch() -> None:
    status = ("Bash", '{"command": "git status"}', "On branch main\n" + "modified: x\n" * 60)
    clear = tc.parse_policy("eino:threshold=1,keep_recent_tokens=1")
    msgs = _run_of(status, ("Bash", '{"command": "git commit -am x"}', "1 file changed " * 20), status)
    r = tc.replay(msgs, clear)
    assert r.cleared_at[2] is not None and r.cleared_at[2] <= 5
    assert not [x for x in tc.losses(r).references if x.terms == ("(fetched again)",)]
    msgs = _run_of(status, ("Grep", '{"pattern": "y"}', "none " * 20), status)
    r = tc.replay(msgs, clear)
    assert [x.message_index for x in tc.losses(r).references if x.terms == ("(fetched again)",)] == [2]


def test_a_term_is_charged_to_the_result_the_reply_copied_from() -> None:
    """The reply's Edit copies lines of the file it read (message 2), not of the diff that
    quoted one of its lines later (message 4): the lost term goes to the file, although
    the diff is the latest holder."""
    body = "\n".join(f"    handleSessionState(ctx, value_{n})" for n in range(12))
    diff = "@@ -1,3 +1,3 @@\n-    handleSessionState(ctx, value_3)\n+    handleSessionState(ctx, other)\n"
    msgs = [tc.Message("user", "fix it"),
            tc.Message("assistant", "", tool_calls=(tc.ToolCall("a", "Read", '{"file_path": "/s.go"}'),)),
            tc.Message("tool", "func run() {\n" + body + "\n}", tool_call_id="a"),
            tc.Message("assistant", "", tool_calls=(tc.ToolCall("b", "Bash", '{"command": "gh api pulls/1/comments"}'),)),
            tc.Message("tool", diff, tool_call_id="b"),
            tc.Message("assistant", "", tool_calls=(tc.ToolCall("c", "Edit", json.dumps(
                {"file_path": "/s.go", "old_string": "\n".join(body.splitlines()[2:6]), "new_string": "x"})),)),
            tc.Message("tool", "ok", tool_call_id="c"), tc.Message("assistant", "done")]
    r = tc.replay(msgs, tc.parse_policy("anthropic:trigger=1,keep=0"))  # both results cleared by the Edit
    assert r.cleared_at[2] is not None and r.cleared_at[4] is not None and r.cleared_at[4] <= 5
    lost = tc.losses(r)
    charged = {x.message_index for x in lost.references if "handleSessionState" in x.terms}
    assert charged == {2} and all(x.kind == "tool" for x in lost.references)


def test_the_report_says_what_kind_of_message_a_loss_charges() -> None:
    """OpenHands' masking also clears the agent's own messages: a needed one is said to be
    an assistant message, not counted among the tool results."""
    t = tc.load(REAL[2])
    r = tc.replay(t.messages, tc.parse_policy("openhands:keep_last=3"))
    lost = tc.losses(r)
    kinds = lost.needed_kinds()
    assert sum(kinds.values()) == len(lost.needed)
    for ref in lost.references:
        assert ref.kind == t.messages[ref.message_index].role
    if len(kinds) > 1:
        assert "assistant message(s)" in lost.needed_text() or "user message(s)" in lost.needed_text()
    m = tc.Message
    # the name comes from a result, then the agent's own plan repeats it: both masked, the
    # reply is charged to the latest holder, the assistant's message
    msgs = [m("user", "go"), m("assistant", "", tool_calls=(tc.ToolCall("l", "Glob", '{"pattern": "*"}'),)),
            m("tool", "src/module_name.py\nsrc/other.py", tool_call_id="l"),
            m("assistant", "I will edit src/module_name.py next", tool_calls=(
                tc.ToolCall("a", "Read", '{"file_path": "/x"}'),)), m("tool", "data " * 50, tool_call_id="a")]
    for k in range(6):
        msgs += [m("assistant", "", tool_calls=(tc.ToolCall(f"b{k}", "Grep", f'{{"pattern": "p{k}"}}'),)),
                 m("tool", "none", tool_call_id=f"b{k}")]
    msgs.append(m("assistant", "Now editing src/module_name.py as planned"))
    lost = tc.losses(tc.replay(msgs, tc.parse_policy("openhands:keep_last=2")))
    assert lost.needed_kinds().get("assistant", 0) >= 1
    assert "assistant message(s)" in lost.needed_text()


def test_a_log_without_the_agents_text_says_losses_cannot_be_judged() -> None:
    """Replies captured without their text (an OpenTelemetry trace without content
    capture, a redacted export): "nothing needed" would be no finding."""
    import io

    from toolclear.cli import main

    t = tc.load(REAL[2])
    blank = [tc.Message(m.role, "" if m.role == "assistant" else m.content, (), m.tool_call_id, m.tool_name)
             for m in t.messages]
    r = tc.replay(blank, tc.parse_policy("eino:threshold=2000,keep=1000"))
    lost = tc.losses(r)
    assert r.cleared_indices and not lost.judged and lost.needed == ()
    assert "cannot be judged" in lost.needed_text()
    assert tc.losses(tc.replay(t.messages, tc.parse_policy("eino:threshold=2000,keep=1000"))).judged
    path = Path(tempfile.mkdtemp()) / "blank.jsonl"
    path.write_text("".join(json.dumps(m.to_dict()) + "\n" for m in blank))
    err = io.StringIO()
    assert main(["reduce", str(path), "--policy", "eino:threshold=2000,keep=1000", "--replay", "-o",
                 str(path.with_name("out.jsonl"))], stdout=io.BytesIO(), stderr=err) == 0
    assert "losses cannot be judged" in err.getvalue()


# ------------------------------------------------------------------ the rules of issue 42, from its real cases


def _run(*steps: tuple[str, dict, str]) -> list[tc.Message]:
    """A user turn, then for each (tool, arguments, result) a call and its result."""
    msgs = [tc.Message("user", "fix the explain command")]
    for k, (tool, args, out) in enumerate(steps):
        msgs += [tc.Message("assistant", "", tool_calls=(tc.ToolCall(f"c{k}", tool, json.dumps(args)),)),
                 tc.Message("tool", out, tool_call_id=f"c{k}", tool_name=tool)]
    return msgs


def _lost_terms(msgs: list[tc.Message]) -> set[str]:
    r = tc.replay(msgs, tc.ClearToolResultConfig(0, 0))  # every result cleared before the next call
    return {t for ref in tc.losses(r).references for t in ref.terms}


def test_standard_library_paths_media_types_and_git_prefixes_are_conventions() -> None:
    assert terms("import encoding/json and net/http.Client") == set()
    assert terms('print("Content-Type: text/html") application/json') == set()
    assert terms("git push origin/main") == set()
    # round 5: git's own config keys, which every git user writes (`git config user.email`)
    assert terms("git config user.email test@test.com && git config user.name Test") == set()
    assert terms("git push origin/feat_123_x") == {"feat_123_x"}  # the branch, which a kept call may name
    msgs = _run(("Read", {"file_path": "cgi/show.py"}, 'print("Content-Type: text/html")\nimport encoding/json'),
                ("Bash", {"command": "git status"}, "clean"),
                ("Edit", {"file_path": "cgi/show.py", "new_string": 'print("Content-Type: text/html")'}, "ok"))
    assert _lost_terms(msgs) == set()


def test_a_line_a_call_opens_that_only_a_cleared_search_held_is_lost() -> None:
    msgs = _run(("Grep", {"pattern": "func explain"}, "cmd/entire/cli/explain.go:774:func explainCommit() {"),
                ("Bash", {"command": "git status"}, "clean"),
                ("Read", {"file_path": "/repo/cmd/entire/cli/explain.go", "offset": 774, "limit": 40}, "..."))
    assert "explain.go:774" in _lost_terms(msgs)
    # the same Read with the search result in sight loses nothing
    kept = tc.replay(msgs, tc.ClearToolResultConfig(10**6, 10**6))
    assert not tc.losses(kept).references


def test_a_test_file_named_from_a_file_in_sight_is_not_lost() -> None:
    assert derived_from("cmd/cli/explain_test.go") == "cmd/cli/explain.go"
    assert derived_from("tests/test_cli_main.py") == "tests/cli_main.py"
    assert derived_from("src/app_view.spec.ts") == "src/app_view.ts"
    assert derived_from("FooBarTest.java") == "FooBar.java" and derived_from("explain.go") == ""
    listing = "cmd/cli/explain.go\ncmd/cli/explain_test.go"
    msgs = [tc.Message("user", "add a test for cmd/cli/explain.go")] + _run(
        ("Bash", {"command": "ls cmd/cli"}, listing), ("Bash", {"command": "git status"}, "clean"),
        ("Write", {"file_path": "cmd/cli/explain_test.go", "content": "package cli"}, "ok"))[1:]
    assert "cmd/cli/explain_test.go" not in _lost_terms(msgs)  # explain.go is in the user's own words
    hidden = _run(("Bash", {"command": "ls cmd/cli"}, listing), ("Bash", {"command": "git status"}, "clean"),
                  ("Write", {"file_path": "cmd/cli/explain_test.go", "content": "package cli"}, "ok"))
    assert "cmd/cli/explain_test.go" in _lost_terms(hidden)  # only the cleared listing showed either


def test_a_path_in_sight_relative_to_its_root_is_not_lost() -> None:
    """``/repo/cmd/cli/explain.go`` in a reply, ``cmd/cli/explain.go`` in a kept message:
    the agent sees the file; a bare file name (``explain.go``) is not enough to say so."""
    assert other_forms("repo/cmd/cli/explain.go") == ("cmd/cli/explain.go", "cli/explain.go")
    listing = "/repo/cmd/cli/explain.go:10: func explain() {"
    seen = [tc.Message("user", "the bug is in cmd/cli/explain.go")] + _run(
        ("Grep", {"pattern": "func explain"}, listing), ("Bash", {"command": "git status"}, "clean"),
        ("Read", {"file_path": "/repo/cmd/cli/explain.go"}, "package cli"))[1:]
    assert "repo/cmd/cli/explain.go" not in _lost_terms(seen)
    hidden = _run(("Grep", {"pattern": "func explain"}, listing), ("Bash", {"command": "git status"}, "clean"),
                  ("Read", {"file_path": "/repo/cmd/cli/explain.go"}, "package cli"))
    assert "repo/cmd/cli/explain.go" in _lost_terms(hidden)


def test_tool_options_libraries_and_placeholders_are_known_to_the_agent() -> None:
    """Real cases: `in_progress`, the status the agent itself gives its todos (a file it
    read also held it); `plumbing.NewBranchReferenceName`, go-git's API; `test.txt` and
    `test.com`, what every test writes."""
    from toolclear.runs.known import known_names
    from toolclear.runs.terms import library_names, terms

    m, call = tc.Message, tc.ToolCall
    read = ('package strategy\n\nimport (\n\t"github.com/entireio/cli/cmd/entire/cli/paths"\n'
            '\t"github.com/entireio/cli/cmd/entire/cli/session"\n\t"github.com/entireio/cli/cmd/entire/cli/agent"\n'
            '\t"github.com/go-git/go-git/v5"\n\t"github.com/go-git/go-git/v5/plumbing"\n)\n'
            '// status == "in_progress"\nref := plumbing.NewBranchReferenceName(name)\n')
    msgs = [m("user", "go"), m("assistant", "", tool_calls=(call("r", "Read", '{"file_path": "/s.go"}'),)),
            m("tool", read, tool_call_id="r"),
            m("assistant", "", tool_calls=(call("t", "TodoWrite", '{"todos": [{"content": "x", "status": '
                                                                '"in_progress"}]}'),)),
            m("tool", "ok", tool_call_id="t")]
    libs = library_names(msgs)
    assert {"github.com/go-git/go-git/v5/plumbing", "plumbing", "git"} <= libs
    assert "paths" not in libs and "github.com/entireio/cli/cmd/entire/cli/paths" not in libs  # the project's own
    assert "in_progress" in known_names(msgs)
    for k in range(3):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", "none " * 30, tool_call_id=f"b{k}")]
    msgs.append(m("assistant", "in_progress: ref := plumbing.NewBranchReferenceName(other) in "
                              "github.com/entireio/cli/cmd/entire/cli/session"))
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert r.cleared_at[2] is not None
    assert [x.terms for x in tc.losses(r).references] == [("github.com/entireio/cli/cmd/entire/cli/session",)]
    assert terms("write test.txt, mail test@test.com, see example.com") == set()


def _reads_then_reply(reads: list[tuple[str, str]], reply: str, fillers: int = 3) -> list[tc.Message]:
    """A run that reads each (path, text), runs ``fillers`` commands, then replies: with
    eino's clear policy at 1/1 every read is cleared before the reply."""
    m, call = tc.Message, tc.ToolCall
    msgs = [m("user", "go")]
    for n, (path, text) in enumerate(reads):
        msgs += [m("assistant", "", tool_calls=(call(f"r{n}", "Read", json.dumps({"file_path": path})),)),
                 m("tool", text, tool_call_id=f"r{n}")]
    for k in range(fillers):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", "none " * 30, tool_call_id=f"b{k}")]
    return msgs + [m("assistant", reply)]


CLEAR_ALL = "eino:threshold=1,keep_recent_tokens=1"


def test_a_line_copied_from_a_read_file_is_matched_without_its_line_number() -> None:
    """Real case: the reply's code copies a plan it read (Read prints `  434→` before each
    line) and a later file merely held one name: the name goes to the plan."""
    plan = "\n".join(f"{n:>6}→{line}" for n, line in enumerate([
        "    case session.ActionClearEndedAt:", "        state.EndedAt = nil", "    default:",
        "        remaining = append(remaining, action)"], start=433))
    other = "   740→\tnow := time.Now()\n   741→\tstate.EndedAt = &now\n"
    msgs = _reads_then_reply([("/plan.md", plan), ("/hooks.go", other)],
                             "\tcase ActionClearEndedAt:\n\t\tstate.EndedAt = nil\n\tdefault:\n"
                             "\t\tremaining = append(remaining, action)\n")
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [(2, ("ActionClearEndedAt", "state.EndedAt"))]


def test_the_instructions_file_and_default_branch_spellings_are_known() -> None:
    """Real cases: `mise run test:integration` quoted from CLAUDE.md (read by a call, but
    in the agent's system prompt all along); `main/master` and `//go:build e2e`."""
    msgs = _reads_then_reply([("/repo/CLAUDE.md", "Integration tests: run `mise run test:integration` before committing")],
                             "Run mise run test:integration as CLAUDE.md says")
    r = tc.replay(msgs, tc.parse_policy(CLEAR_ALL))
    assert r.cleared_at[2] is not None and not tc.losses(r).references
    assert tc.runs.terms.terms("find the default branch (main/master) //go:build e2e") == set()


def test_a_prose_reply_is_charged_to_the_holder_that_uses_the_name_most() -> None:
    """Real case: a reply names `PrepareCommitMsg` in prose; a test helper's comment named
    it once, later than the hooks file that defines and calls it: the hooks file is charged."""
    hooks = ("func (s *ManualCommitStrategy) PrepareCommitMsg(f string) error {\n\t// PrepareCommitMsg adds the "
             "trailer\n}\n// called from PrepareCommitMsg\n")
    helper = "// an agent commit triggers the fast path in PrepareCommitMsg\n"
    msgs = _reads_then_reply([("/hooks.go", hooks), ("/testenv.go", helper)],
                             "stagedFilesOverlapWithContent is used in PrepareCommitMsg for carry-forward")
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [(2, ("PrepareCommitMsg",))]

def test_a_prose_reply_is_charged_to_the_holder_whose_file_its_line_names() -> None:
    """Real case (round 5): a review says "Phase state machine (ACTIVE, ACTIVE_COMMITTED,
    IDLE, ENDED) matches `session/phase.go`"; strategy.go's comments name the state twice,
    phase.go once: the read of phase.go is charged, the file the line says it checked."""
    strategy = ("// that was deferred during ACTIVE_COMMITTED -> IDLE transitions.\n"
                "\t// ACTIVE_COMMITTED -> IDLE (or other) turn-end transition.\n")
    phase = 'b.WriteString("    state \\"ACTIVE_COMMITTED\\" as active_committed\\n")\n'
    reply = ("Everything else checks out:\n- Phase state machine (ACTIVE, ACTIVE_COMMITTED, IDLE, ENDED) matches "
             "`session/phase.go`\n- the rest matches `strategy.go`")
    msgs = _reads_then_reply([("/cli/strategy/strategy.go", strategy), ("/cli/session/phase.go", phase)], reply)
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [(4, ("ACTIVE_COMMITTED",))]
    # the line names no holder's file: the holder that holds it most often, as before
    msgs[-1] = tc.Message("assistant", "Phase state machine (ACTIVE, ACTIVE_COMMITTED, IDLE) matches the docs")
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [(2, ("ACTIVE_COMMITTED",))]
    # a name that only ends like the file (`myphase.go`) is not the file
    msgs[-1] = tc.Message("assistant", "Phase state machine (ACTIVE, ACTIVE_COMMITTED, IDLE) matches `myphase.go`")
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [(2, ("ACTIVE_COMMITTED",))]


def test_a_prose_reply_is_charged_to_the_holder_that_holds_more_of_its_terms() -> None:
    """Real case (round 6): "Looking at the test, it uses `SessionFilePath(checkpointID,
    paths.TranscriptFileName)`": the constant is also in a strategy file that names it
    more often, but only the test also holds SessionFilePath and checkpointID."""
    test = ("transcriptPath := SessionFilePath(checkpointID, paths.TranscriptFileName)\n"
            "provisionalContent, found := env.ReadFileFromBranch(paths.MetadataBranchName, transcriptPath)\n")
    strategy = ("if file, fileErr := tree.File(metadataDir + \"/\" + paths.TranscriptFileName); fileErr == nil {\n"
                "\tlog(paths.TranscriptFileName)\n")
    reply = "Looking at the test, it uses `SessionFilePath(checkpointID, paths.TranscriptFileName)` to get the path"
    msgs = _reads_then_reply([("/cli/integration_test/deferred_test.go", test),
                              ("/cli/strategy/manual_commit_condensation.go", strategy)], reply)
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert [(x.message_index, x.terms) for x in lost.references] == [
        (2, ("SessionFilePath", "checkpointID", "paths.TranscriptFileName"))]


def test_a_name_in_sight_by_another_naming_rule_is_not_lost() -> None:
    """Real case: the agent reads `files_touched: null` in a visible checkpoint and greps
    for `FilesTouched`, the Go field, which only a cleared file also held."""
    from toolclear.runs.terms import renamed

    assert renamed("files_touched") == ("FilesTouched", "filesTouched") and renamed("FilesTouched") == (
        "files_touched",)
    m, call = tc.Message, tc.ToolCall
    msgs = [m("user", "go"), m("assistant", "", tool_calls=(call("r", "Read", '{"file_path": "/s.go"}'),)),
            m("tool", "state.FilesTouchedCount = countFilesTouched(state.FilesTouchedCount, files)\n" * 3,
              tool_call_id="r")]
    for k in range(3):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", "none " * 30, tool_call_id=f"b{k}")]
    msgs += [m("assistant", "", tool_calls=(call("c", "Bash", '{"command": "cat cp.json"}'),)),
             m("tool", '{"files_touched_count": null}', tool_call_id="c"),
             m("assistant", "the checkpoint has files_touched_count null; grep FilesTouchedCount")]
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=40"))
    assert r.cleared_at[2] is not None and r.cleared_at[len(msgs) - 2] is None
    assert not [x for x in tc.losses(r).references if "FilesTouchedCount" in x.terms]
    msgs[-2] = m("tool", "{}", tool_call_id="c")  # nothing in sight: the cleared file is needed
    msgs[-1] = m("assistant", "grep FilesTouchedCount")
    r = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=40"))
    assert [x.terms for x in tc.losses(r).references] == [("FilesTouchedCount",)]


def test_the_files_the_agent_wrote_are_known_to_it() -> None:
    """Real case: after a compaction the agent lists the files it changed
    (`cmd/entire/cli/strategy/manual_commit_git.go`): it wrote them itself, so naming
    them again needs nothing the compaction dropped; a file it has not written yet, named
    only by a dropped listing, is still lost."""
    m, call = tc.Message, tc.ToolCall
    path = "cmd/entire/cli/strategy/manual_commit_git.go"

    def run(writes: bool) -> tc.Losses:
        msgs = [m("user", "go"), m("assistant", "", tool_calls=(call("s", "Bash", '{"command": "git status"}'),)),
                m("tool", f"modified: {path}\nmodified: cmd/entire/cli/strategy/other_file.go", tool_call_id="s")]
        if writes:
            msgs += [m("assistant", "", tool_calls=(call("e", "Edit", json.dumps(
                         {"file_path": "/Users/a/cli/" + path, "old_string": "x", "new_string": "y"})),)),
                     m("tool", "ok", tool_call_id="e")]
        for k in range(4):
            msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                     m("tool", "none " * 30, tool_call_id=f"b{k}")]
        msgs.append(m("assistant", f"Files changed: {path}"))
        return tc.losses(tc.replay(msgs, tc.parse_policy("openhands:keep_last=1")))

    assert not [x for x in run(True).references if path in x.terms]
    assert [x for x in run(False).references if path in x.terms]


def test_a_line_many_files_share_is_no_copy() -> None:
    """Real case: `slog.String("error", err.Error()),` copied into a new logging call: the
    line is in every file the agent read, so it shows no copy of the one charged."""
    line = '\t\tslog.String("error", err.Error()),'
    files = [(f"/f{n}.go", f"func f{n}() {{\n\tlogging.Warn(ctx, \"failed {n}\",\n{line}\n\t)\n}}\n") for n in range(3)]
    reply = f'logging.Warn(ctx, "failed to read chunk",\n{line}\n)'
    lost = tc.losses(tc.replay(_reads_then_reply(files, reply), tc.parse_policy(CLEAR_ALL)))
    assert not lost.references
    one = tc.losses(tc.replay(_reads_then_reply(files[:1], reply), tc.parse_policy(CLEAR_ALL)))
    assert [x.terms for x in one.references] == [("err.Error",)]  # one file: the line is its


def test_a_call_made_again_after_it_failed_fetches_nothing_back() -> None:
    """Real case: a Read past the file's end (Claude Code: "Warning: the file exists but is
    shorter than the provided offset") made again: the first fetched nothing to need."""
    read = ("Read", '{"file_path": "/repo/mise.toml", "offset": 98}',
            "<system-reminder>Warning: the file exists but is shorter than the provided offset (98). "
            "The file has 97 lines.</system-reminder>")
    msgs = _run_of(read, ("Grep", '{"pattern": "x"}', "none " * 200), read)
    r = tc.replay(msgs, tc.parse_policy(CLEAR_ALL))
    assert r.cleared_at[2] is not None and r.cleared_at[2] <= 5
    assert not [x for x in tc.losses(r).references if x.terms == ("(fetched again)",)]
    ok = ("Read", '{"file_path": "/repo/mise.toml"}', "[tools]\ngo = '1.25'\n" * 30)
    r = tc.replay(_run_of(ok, ("Grep", '{"pattern": "x"}', "none " * 200), ok), tc.parse_policy(CLEAR_ALL))
    assert [x.message_index for x in tc.losses(r).references if x.terms == ("(fetched again)",)] == [2]


def test_placeholders_and_the_files_it_wrote_by_name() -> None:
    """Real cases: `file.txt` in test data; `committed.go`, a file the agent edited, named
    bare in its summary after a compaction."""
    assert tc.runs.terms.terms('CalculateAttribution(nil, nil, []string{"file.txt"})') == {"CalculateAttribution"}
    from toolclear.runs.known import files_written

    msgs = [tc.Message("assistant", "", tool_calls=(tc.ToolCall("e", "Edit", json.dumps(
        {"file_path": "/u/cli/cmd/entire/cli/checkpoint/committed.go", "old_string": "a", "new_string": "b"})),))]
    assert {"committed.go", "checkpoint/committed.go", "u/cli/cmd/entire/cli/checkpoint/committed.go"} <= set(
        files_written(msgs))


def test_a_name_the_agent_wrote_into_a_file_is_known_after_a_compaction() -> None:
    """Real case (round 5): the agent read root.go, then wrote `buildinfo.Version` into
    it and other files; after a compaction it names `buildinfo.Version` again, which its
    own work (and a real summary of it) holds: not lost. Without the write, the read's
    name is lost with the read."""
    from toolclear.runs.known import written_by_agent

    m, call = tc.Message, tc.ToolCall

    def run(new: str) -> list[tc.Message]:
        msgs = [m("user", "go"), m("assistant", "", tool_calls=(call("r", "Read", '{"file_path": "/cli/root.go"}'),)),
                m("tool", "\t\tversioncheck.CheckAndNotify(cmd, buildinfo.Version)\n" + "x = 1\n" * 2000,
                  tool_call_id="r"),
                m("assistant", "", tool_calls=(call("e", "Edit", json.dumps(
                    {"file_path": "/cli/root.go", "old_string": "CheckAndNotify(cmd", "new_string": new})),)),
                m("tool", "ok", tool_call_id="e")]
        for k in range(12):
            msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                     m("tool", f"file{k} " * 8000, tool_call_id=f"b{k}")]
        return msgs + [m("assistant", "Now set buildinfo.Version from the ldflags")]

    wrote = run("buildinfo.Version, buildinfo.Commit)")
    assert written_by_agent(wrote)["buildinfo.Version"] == 3
    r = tc.replay(wrote, tc.parse_policy("anthropic-compaction:trigger=50000"))
    assert r.cache_breaks and not tc.losses(r).references
    r = tc.replay(run("v)"), tc.parse_policy("anthropic-compaction:trigger=50000"))
    assert [x.terms for x in tc.losses(r).references] == [("buildinfo.Version",)]
    # a patch's added lines are what it writes; its removed lines are not
    patch = tc.ToolCall("p", "apply_patch", json.dumps(
        {"input": "*** Begin Patch\n*** Update File: a.go\n-old := cfg.OldName\n+use := cfg.NewName\n*** End Patch"}))
    found = written_by_agent([m("assistant", "", tool_calls=(patch,))])
    assert "cfg.NewName" in found and "cfg.OldName" not in found


def test_what_the_agent_said_before_a_simulated_compaction_is_carried_by_its_summary() -> None:
    """Real cases (round 6): after a simulated compaction the agent works through the
    plan it wrote before it (`TurnCheckpointIDs` on session reset, `claude.go:435`) or
    names what the log's own compaction summary said (`commitWithMetadata`): a summary
    carries what the agent said. A name only a tool result held is still lost, and the
    run as recorded (no simulated summary) keeps judging by the log's own summaries."""
    m, call = tc.Message, tc.ToolCall
    msgs = [m("user", "review the PR"), m("assistant", "", tool_calls=(call("r", "Read", '{"file_path": "/s.go"}'),)),
            m("tool", "state.TurnCheckpointIDs = nil\nfunc resetHelperAlpha() {}\n" + "x = 1\n" * 3000, tool_call_id="r"),
            m("assistant", "Issues: 1. TurnCheckpointIDs on session reset must be cleared")]
    for k in range(12):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", f"file{k} " * 8000, tool_call_id=f"b{k}")]
    msgs += [m("assistant", "Now test that TurnCheckpointIDs is cleared, and look at resetHelperAlpha")]
    r = tc.replay(msgs, tc.parse_policy("anthropic-compaction:trigger=50000"))
    assert any(x.meta and "stands_for_tokens" in x.meta for x in r.messages)
    assert [x.terms for x in tc.losses(r).references] == [("resetHelperAlpha",)]
    # without a simulated summary (a clearing policy), the same words are judged as before
    cleared = tc.replay(msgs, tc.parse_policy("eino:threshold=1,keep_recent_tokens=1"))
    assert not any(x.meta and "stands_for_tokens" in x.meta for x in cleared.messages)


def test_an_edit_is_charged_to_the_read_of_the_file_it_edits() -> None:
    """Real case (round 7): an Edit of state.go copies its import block; rewind.go's,
    read later, shares those import lines: the read of state.go is charged. And the
    project's settings file (`settings.json`) is named by convention, not lost."""
    imports = ('\t"github.com/entireio/cli/cmd/entire/cli/jsonutil"\n\t"github.com/entireio/cli/cmd/entire/cli/paths"\n'
               '\t"github.com/entireio/cli/cmd/entire/cli/strategy"\n')
    m, call = tc.Message, tc.ToolCall
    msgs = [m("user", "go")]
    for n, path in enumerate(["/cli/state.go", "/cli/rewind.go"]):
        msgs += [m("assistant", "", tool_calls=(call(f"r{n}", "Read", json.dumps({"file_path": path})),)),
                 m("tool", "package cli\n\nimport (\n" + imports + ")\n" + f"// {path} body\n" * 3, tool_call_id=f"r{n}")]
    for k in range(3):
        msgs += [m("assistant", "", tool_calls=(call(f"b{k}", "Bash", f'{{"command": "ls {k}"}}'),)),
                 m("tool", "none " * 30, tool_call_id=f"b{k}")]
    edit = {"file_path": "/cli/state.go", "old_string": imports, "new_string": imports + '\t"os"\n'}
    msgs.append(m("assistant", "", tool_calls=(call("e", "Edit", json.dumps(edit)),)))
    lost = tc.losses(tc.replay(msgs, tc.parse_policy(CLEAR_ALL)))
    assert {x.message_index for x in lost.references} == {2}
    assert terms("I know .entire/ holds settings.json and .claude/settings.local.json") == set()
