"""`toolclear app FILE` from an installed wheel: a real server, a real browser, the file open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .conftest import ROOT, _free_port, _healthy


def start_app(tmp_path: Path, args: list[str], env: dict[str, str] | None) -> tuple[Any, str, Any]:
    """`toolclear app ARGS` on a free port, in a session of its own; waits until it serves."""
    port = _free_port()
    log = (tmp_path / "app.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "toolclear", "app", *args, "--port", str(port), "--address",
                             "127.0.0.1", "--headless"], env=env, cwd=tmp_path, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    while not _healthy(url):
        assert proc.poll() is None, (tmp_path / "app.log").read_text()
        assert time.monotonic() - t0 < 60, (tmp_path / "app.log").read_text()
        time.sleep(0.2)
    return proc, url, log


def test_toolclear_app_opens_the_file_from_an_installed_wheel(page, tmp_path) -> None:
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("toolclear-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run([sys.executable, "-c", "import toolclear.inspector.app as a; print(a.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert where.startswith(str(target))  # the wheel's copy, not the checkout's

    transcript = ROOT / "tests" / "data" / "formats" / "gemini-cli_session.json"
    proc, url, log = start_app(tmp_path, [str(transcript)], env)
    try:
        page.goto(url)
        caption = page.get_by_test_id("stCaptionContainer").filter(has_text="format gemini-cli")
        expect(caption).to_contain_text(transcript.name, timeout=30_000)
        expect(page.get_by_test_id("stMetric").filter(has_text="Tool results")).to_contain_text("2")
        # the wheel carries the samples too
        assert sorted(p.name for p in (target / "toolclear" / "inspector" / "samples").glob("*.json*"))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


def test_toolclear_app_refuses_a_missing_file_in_one_line(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "toolclear", "app", str(tmp_path / "nope.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such file" in done.stderr
    assert Path(tmp_path).exists()


def test_sigterm_to_toolclear_app_stops_its_server(tmp_path) -> None:
    """`kill PID` (SIGTERM to the toolclear process only, not its group) stops the
    Streamlit server too: nothing keeps the port."""
    proc, url, log = start_app(tmp_path, [], None)
    try:
        proc.send_signal(signal.SIGTERM)  # the parent alone, as `kill` does
        proc.wait(timeout=30)
        t0 = time.monotonic()
        while _healthy(url):
            assert time.monotonic() - t0 < 15, "the Streamlit server outlived toolclear app"
            time.sleep(0.2)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.close()
