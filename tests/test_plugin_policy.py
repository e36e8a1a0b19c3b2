"""A policy from another package, installed the way a user installs one (``pip
install``), reaches the library, the CLI, ``compare``, the corpus sweep and the app
through the ``toolclear.policies`` entry points, with no change to toolclear.

The package is ``tests/plugin`` (the README's example). It is installed into a
folder of its own and put on ``PYTHONPATH`` of subprocesses, so the rest of the suite
never sees it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "coding-agent.openai.json"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(ROOT / "tests" / "plugin")], check=True, capture_output=True, timeout=300)
    assert (target / "toolclear_keep_last").is_dir()
    return target


def run(site: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)


def test_the_library_compare_and_the_corpus_run_it(site: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / SAMPLE.name).write_bytes(SAMPLE.read_bytes())
    out = run(site, """
        import json, sys
        import toolclear as tc
        from toolclear.policies import plugins
        info = plugins()["keep-last"]
        t = tc.load(sys.argv[1])
        config = tc.runs.lab.parse_policy("keep-last:keep=2,after=3")
        r = tc.replay(t, config)
        tools = [i for i, m in enumerate(t.messages) if m.role == "tool"]
        once = tc.apply(t, config)
        cmp = tc.compare(t, [config, tc.ClearToolResultConfig()], pricing="claude-sonnet-4-5")
        corpus = tc.load_corpus(sys.argv[2])
        serial = tc.sweep_corpus(corpus, [config], engine="serial").table
        procs = tc.sweep_corpus(corpus, [config], engine="process", workers=2).table
        print(json.dumps({
            "source": info.source, "spec": tc.runs.lab.policy_spec(config),
            "cleared": list(once.cleared_indices), "expected": tools[:-2] if len(tools) > 3 else [],
            "replay_cleared": len(r.cleared_indices), "name": tc.runs.lab.policy_name(config),
            "compare": list(cmp.labels),
            "dollars": bool(cmp.costs and cmp.costs[0].dollars > 0),
            "serial": serial["results_cleared"].tolist(), "procs": procs["results_cleared"].tolist(),
        }))
    """, str(SAMPLE), str(tmp_path / "runs"))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["source"] == "toolclear-keep-last"
    assert got["spec"] == "keep-last:n=2,after=3" and got["name"] == "keep-last"
    assert got["cleared"] == got["expected"] and got["cleared"]
    assert got["replay_cleared"] == len(got["cleared"])
    assert got["dollars"] and got["compare"][0].startswith("keep-last")
    assert got["serial"] == got["procs"] == [got["replay_cleared"]]


def test_the_cli_takes_it(site: Path, tmp_path: Path) -> None:
    out = run(site, """
        import sys
        from toolclear.cli import main
        sys.exit(main(sys.argv[1:]))
    """, "reduce", str(SAMPLE), "--policy", "keep-last:n=1,after=1", "-o", str(tmp_path / "out.json"))
    assert out.returncode == 0, out.stderr
    back = json.loads((tmp_path / "out.json").read_text())
    assert sum(m.get("content") == "[gone]" for m in back) > 0
    bad = run(site, """
        import sys
        from toolclear.cli import main
        sys.exit(main(sys.argv[1:]))
    """, "reduce", str(SAMPLE), "--policy", "keep-last:nope=1")
    assert bad.returncode == 2 and "unknown option 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_the_app_offers_it(site: Path) -> None:
    out = run(site, """
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file("app.py", default_timeout=60)
        at.run()
        label = "Keep the last N results (plugin)"
        assert label in at.selectbox(key="policy").options, at.selectbox(key="policy").options
        at.selectbox(key="policy").set_value(label).run()
        assert not at.exception, at.exception
        at.number_input(key="p_keep_last_after_input").set_value(2).run()
        assert not at.exception, at.exception
        for view in ("Token usage", "Replay", "Messages", "Sweep", "Compare", "Export"):
            at.session_state["view"] = view
            at.run()
            assert not at.exception, (view, at.exception)
        print({m.label: m.value for m in at.metric})
    """)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Changed at some call" in out.stdout
