"""AppTest: the inspector used as a sequence, not a page.

Random sequences of policy switches, file changes, page changes, modes, pricing and
slider moves; after every step no exception, every slider within its range and equal to
the value in use, each policy's settings as the user last left them, and Compare's
dollars equal to the headline's for the same config.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import toolclear as tc
from toolclear.inspector.controls import knobs_for, policy_choices, widget_key
from toolclear.runs import lab
from toolclear.runs.report import usd

from ..conftest import CORPUS, hypothesis_examples
from .test_app import go, page_of, show, start

FILES = {
    "codex": CORPUS / "codex_cli" / "codex-session-view_rollout-2025-11-17T15-30-28-019a93b9.jsonl",
    "claude-code": CORPUS / "claude_code" / "entire-cli_cc-2.1.31_hook-progress_75-0b6d4ae881.jsonl",
    "swe-agent": CORPUS / "swe_agent" / "swe-agent_gpt4_pydicom-1458.traj",
    "otel": CORPUS.parent / "formats" / "otel_pydantic-ai.json",  # a trace: exported as an OpenAI transcript
}


def knob_keys(kind: str) -> dict[str, str]:
    """field -> the widget-name stem of each of a policy's slider pairs."""
    return {k.field: widget_key(kind, k.field) for k in knobs_for(kind)}


def defaults(kind: str) -> dict[str, int]:
    base = lab.parse_policy(kind)
    return {f: int(getattr(base, f)) for f in knob_keys(kind)}


class Session:
    """An AppTest and what its user expects of it."""

    def __init__(self) -> None:
        self.at = start()
        self.expected = {kind: defaults(kind) for kind in policy_choices().values()}

    @property
    def kind(self) -> str:
        return policy_choices()[self.at.selectbox(key="policy").value]

    def run(self, what: str) -> None:
        at = self.at
        assert not at.exception, (what, at.exception)
        wrong = [e.value for e in at.error if "Something went wrong" in e.value]
        assert not wrong, (what, wrong)
        if page_of(at) != "One run":
            return
        sliders = {s.key: s for s in at.slider}
        for field, stem in knob_keys(self.kind).items():
            want = self.expected[self.kind][field]
            slider = sliders[f"{stem}_slider"]
            assert slider.min <= slider.value <= slider.max, (what, stem, slider.value, slider.max)
            assert slider.value == want, (what, stem, slider.value, want)
            assert at.number_input(key=f"{stem}_input").value == want, (what, stem)

    def on_one_run(self) -> bool:
        return page_of(self.at) == "One run"

    def policy(self, label: str) -> None:
        if not self.on_one_run():
            return
        self.at.selectbox(key="policy").set_value(label).run()
        self.run(f"policy {label}")

    def upload(self, name: str) -> None:
        if not self.on_one_run():
            return
        path = FILES[name]
        self.at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/json")).run()
        self.run(f"file {name}")

    def page(self, name: str) -> None:
        go(self.at, name)
        self.run(f"page {name}")

    def mode(self, name: str) -> None:
        if page_of(self.at) == "One run":
            self.at.radio(key="mode").set_value(name).run()
            self.run(f"mode {name}")

    def pricing(self, name: str) -> None:
        if page_of(self.at) == "One run":
            self.at.selectbox(key="pricing").set_value(name).run()
            self.run(f"pricing {name}")

    def move(self, which: int, fraction: float, exact: bool) -> None:
        """Move one of the current policy's sliders (or type into its number box)."""
        if page_of(self.at) != "One run":
            return
        keys = list(knob_keys(self.kind).items())
        if not keys:  # a policy with no number (SWE-agent's closed windows): nothing to move
            return
        field, stem = keys[which % len(keys)]
        if exact:
            value = int(fraction * 250_000)
            self.at.number_input(key=f"{stem}_input").set_value(value).run()
        else:
            slider = self.at.slider(key=f"{stem}_slider")
            step = int(slider.step or 1)
            value = int(slider.min + round(fraction * (slider.max - slider.min) / step) * step)
            slider.set_value(value).run()
        self.expected[self.kind][field] = value
        self.run(f"move {stem} to {value}")

    def offload(self, on: bool) -> None:
        """Switch offloading, where the policy takes it (eino's clear policy); its numbers
        must then be the library's with that offloading."""
        at = self.at
        if page_of(at) != "One run" or not any(t.key == "offload_on" for t in at.toggle):
            return
        at.toggle(key="offload_on").set_value(on).run()
        self.run(f"offload {on}")

    def view(self, name: str) -> None:
        """Open one of the One run page's tabs (only the open one runs)."""
        if page_of(self.at) == "One run":
            show(self.at, name)
            self.run(f"view {name}")

    def compare_dollars_match_headline(self) -> None:
        """In replay with a pricing: Compare's first row (the sidebar's policy) costs
        what the headline says."""
        at = self.at
        if page_of(at) != "One run" or at.selectbox(key="pricing").value == "(no pricing)":
            return
        at.radio(key="mode").set_value("replay").run()
        headline = {m.label: m.value for m in at.metric}.get("Cost with the policy")
        if headline is None:
            return
        show(at, "Compare")
        table = next(df.value for df in at.dataframe if "policy" in df.value.columns)
        assert usd(float(table["dollars"].iloc[0])) == headline, (table.iloc[0].to_dict(), headline)
        show(at, "Token usage")


ACTIONS = st.one_of(
    st.tuples(st.just("policy"), st.sampled_from(list(policy_choices()))),
    st.tuples(st.just("upload"), st.sampled_from(list(FILES))),
    st.tuples(st.just("page"), st.sampled_from(["Corpus", "One run"])),
    st.tuples(st.just("mode"), st.sampled_from(["single pass", "replay"])),
    st.tuples(st.just("pricing"), st.sampled_from(["(no pricing)", "claude-sonnet-4-5", "gpt-5"])),
    st.tuples(st.just("move"), st.integers(0, 1), st.floats(0, 1), st.booleans()),
    st.tuples(st.just("offload"), st.booleans()),
    st.tuples(st.just("view"), st.sampled_from(["Token usage", "Replay", "Messages", "Parameter sweep", "Compare",
                                                 "Export"])),
)


def play(s: Session, steps: list[tuple[Any, ...]]) -> None:
    for name, *args in steps:
        getattr(s, name)(*args)
    s.page("One run")
    s.compare_dollars_match_headline()


@settings(max_examples=hypothesis_examples(6), deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(ACTIONS, min_size=3, max_size=8))
def test_random_sequences_keep_every_setting(steps: list[tuple[Any, ...]]) -> None:
    play(Session(), steps)


@pytest.mark.parametrize("name", ["codex", "claude-code"])
def test_the_reported_switches_keep_eino_settings(name: str) -> None:
    """Codex: Anthropic, then eino crashed (a 20,000 slider value over a 2,000 range);
    Claude Code: Anthropic, LangChain, eino left eino at 0 / 0."""
    s = Session()
    s.upload(name)
    s.move(0, 0.3, True)
    for label in ("Anthropic context editing", "LangChain ClearToolUsesEdit", "eino clear-tool-result",
                  "eino reduction middleware", "eino clear-tool-result"):
        s.policy(label)
    assert s.expected["eino"]["tool_result_token_threshold"] == int(0.3 * 250_000)


def test_a_value_past_the_transcripts_size_widens_the_slider() -> None:
    """The slider shows the value in use, however large (never a clamped one)."""
    s = Session()
    s.upload("codex")
    s.policy("Anthropic context editing")
    assert s.at.slider(key="p_anthropic_trigger_input_tokens_slider").value == 100_000
    s.policy("eino reduction middleware")
    assert s.at.slider(key="p_eino_reduction_max_tokens_for_clear_slider").value == 160_000


def test_settings_survive_the_corpus_page_and_a_new_file() -> None:
    s = Session()
    s.policy("LangChain ClearToolUsesEdit")
    s.move(1, 0.5, False)
    s.at.selectbox(key="pricing").set_value("claude-sonnet-4-5").run()
    s.page("Corpus")
    s.page("One run")
    s.upload("swe-agent")
    assert s.at.selectbox(key="policy").value == "LangChain ClearToolUsesEdit"
    s.run("back from Corpus")


def test_slider_steps_are_round() -> None:
    s = Session()
    s.upload("claude-code")
    for slider in s.at.slider:
        step = int(slider.step)
        assert step == 1 or str(step).rstrip("0") in ("1", "2", "25", "5"), (slider.key, step)
        assert slider.max % step == 0


def test_compare_uses_the_headlines_calibration() -> None:
    s = Session()
    s.upload("claude-code")
    s.pricing("claude-opus-4-5")
    assert s.at.toggle(key="pr_calibrate").value  # the log recorded usage: calibrated by default
    s.compare_dollars_match_headline()
    t = tc.load(FILES["claude-code"])
    plain = tc.compare(t.messages, [tc.ClearToolResultConfig()], pricing="claude-opus-4-5", calibrate=False).table
    calibrated = tc.compare(t.messages, [tc.ClearToolResultConfig()], pricing="claude-opus-4-5", calibrate=True,
                            compactions=[k for k, _ in t.marks]).table
    assert plain["dollars"].iloc[0] != calibrated["dollars"].iloc[0]


def test_a_long_runs_losses_are_found_on_request(monkeypatch) -> None:
    """Past LOSSES_AUTO_LIMIT messages, scanning every text on each slider move would take
    seconds: the headline offers a button instead, and after it the losses are kept."""
    from toolclear.inspector import history

    monkeypatch.setattr(history, "LOSSES_AUTO_LIMIT", 10)
    s = Session()
    s.upload("claude-code")
    s.mode("replay")
    s.move(0, 0.0, True)  # threshold 0
    s.move(1, 0.02, True)  # keep 5,000: results are cleared
    captions = " ".join(c.value for c in s.at.caption)
    assert "Needed later" not in captions and s.at.button(key="losses_go")
    s.at.button(key="losses_go").click().run()
    assert any("Needed later" in c.value for c in s.at.caption)
    s.move(1, 0.03, True)
    assert any("Needed later" in c.value for c in s.at.caption)  # kept up to date once asked for


def test_offloading_then_every_view_then_another_policy() -> None:
    """The unified road carries offloading through every view of eino's clear policy, and
    a policy without it drops it."""
    s = Session()
    s.upload("claude-code")
    s.offload(True)
    s.at.number_input(key="offload_limit").set_value(300).run()
    for name in ("Replay", "Messages", "Parameter sweep", "Compare", "Export", "Token usage"):
        s.view(name)
    s.view("Export")
    labels = [b.label for b in s.at.get("download_button")]
    t = tc.load(FILES["claude-code"])
    off = tc.apply(t.messages, tc.ClearToolResultConfig(), offloading=tc.ToolResultOffloadingConfig(300))
    assert ("Offloaded files (zip)" in labels) == any(r is not None and r.offloaded for r in off.offloads)
    s.policy("Anthropic context editing")
    assert not any(t.key == "offload_on" for t in s.at.toggle)
