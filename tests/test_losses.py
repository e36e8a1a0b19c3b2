"""toolclear.losses: each rule of the definition, a naive implementation of it written
straight from the issue's text (contexts rebuilt at every call), and its properties."""

from __future__ import annotations

import json
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear.lost import message_text, pieces, terms

from .conftest import CORPUS, hypothesis_examples

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
    out = set()
    for run in runs:
        run = run.strip("./:-")
        signal = any(c.isdigit() or c in "_/.:" for c in run) or any(
            a.islower() and b.isupper() for a, b in zip(run, run[1:]))
        if (8 <= len(run) <= 200 and signal
                and not any(run.startswith(d) for d in ("nolint:", "noqa", "pylint:", "eslint-disable", "type:"))
                and run.split(".")[0] not in language):
            out.add(run)
    return out


@settings(max_examples=hypothesis_examples(400), deadline=None)
@given(st.lists(st.sampled_from(["a", "Z", "b", "Q", "0", "7", "_", ".", "/", ":", "-", " ", "\n", "(", "é",
                                 "os.", "np", "noqa", "type:", "fmt.Err", "getX", "Name", "abcdefgh", "x" * 199]),
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


def naive(result: tc.Result, original: list[tc.Message]) -> tuple[set[tuple[int, int, tuple[str, ...]]], set[int]]:
    """The definition as written: at every call, rebuild both contexts from scratch."""
    changed_by: dict[int, int] = {}
    refs = set()
    for k, step in enumerate(result.steps):
        for i in step.changed_indices:
            changed_by.setdefault(i, k)
        c = step.call_index
        if c >= len(original) or original[c].role != "assistant":
            continue
        changed = {i for i, at in changed_by.items() if at <= k}
        unreduced = set().union(*(pieces(message_text(m)) for m in original[:c])) if c else set()
        reduced = set().union(*(pieces(message_text(result.messages[i] if i in changed else original[i]))
                                for i in range(c))) if c else set()
        lost = {t for t in terms(message_text(original[c])) if t in unreduced and t not in reduced}
        charged: dict[int, list[str]] = {}
        for t in lost:  # to the latest earlier message that held it (all of them are changed)
            latest = max(i for i in range(c) if t in pieces(message_text(original[i])))
            charged.setdefault(latest, []).append(t)
        for i, mine in charged.items():
            refs.add((c, i, tuple(sorted(mine))))
    refs |= naive_refetches(result, original)
    return refs, {i for _, i, _ in refs}


def naive_refetches(result: tc.Result, original: list[tc.Message]) -> set[tuple[int, int, tuple[str, ...]]]:
    """A re-fetch, as written: a call whose tool and arguments (or, for a read, file) are
    those of the latest earlier result with them, made while that result was changed."""
    def keys(call: tc.ToolCall) -> set[tuple[str, str]]:
        out = {(call.name, " ".join(call.arguments.split()))}
        if any(w in call.name.lower() for w in ("read", "view", "open", "cat", "get_file")):
            try:
                args = json.loads(call.arguments)
            except ValueError:
                args = None
            for key in ("file_path", "path", "filename", "file", "absolute_path", "target_file"):
                if isinstance(args, dict) and isinstance(args.get(key), str) and args[key]:
                    out.add(("<file>", args[key]))
                    break
        return out

    calls = {c.id: c for m in original if m.role == "assistant" for c in m.tool_calls if c.id}
    refs, charged = set(), set()
    for k, m in enumerate(original):
        if m.role != "assistant":
            continue
        for call in m.tool_calls:
            for key in keys(call):
                earlier = [i for i in range(k) if original[i].role == "tool" and original[i].tool_call_id in calls
                           and key in keys(calls[original[i].tool_call_id])]
                if not earlier:
                    continue
                i = earlier[-1]
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
    from toolclear import sweep

    t = tc.load_all(REAL[0])[0]
    sw = sweep.sweep(t.messages, tc.ClearToolResultConfig(), [0, 5_000], [5_000, 20_000], mode="replay")
    for i, th in enumerate(sw.thresholds):
        for j, keep in enumerate(sw.keeps):
            r = tc.replay(t.messages, tc.ClearToolResultConfig(th, keep))
            assert sw.needed[i][j] == len(tc.losses(r).needed)
    assert any(v for row in sw.needed for v in row)
