"""A slider move in the real inspector, timed in Debian's Chromium.

Starts ``streamlit run app.py`` on a free port, uploads a transcript, then moves the
keep-recent slider with the keyboard (alternating Home and End, so every move changes
what is cleared) and times each move from the key press until the app shows the numbers
the core computes for the new value and is idle again.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import toolclear as tc  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url + "/_stcore/health", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def slider_moves(path: Path, moves: int = 8) -> list[float]:
    from playwright.sync_api import expect, sync_playwright

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
         "--server.fileWatcherType=none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while not _healthy(url):
            if time.monotonic() - t0 > 60:
                raise TimeoutError("streamlit did not start")
            time.sleep(0.1)
        t = tc.load(path)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
            page.wait_for_selector(idle, timeout=60_000)
            page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
            expect(page.get_by_test_id("stCaptionContainer").filter(has_text=path.name)).to_be_visible(timeout=60_000)
            page.wait_for_selector(idle, timeout=60_000)
            thumb = page.get_by_test_id("stSlider").filter(has_text="Keep-recent token budget").get_by_role("slider")
            top = int(thumb.get_attribute("max") or "0")
            metric = page.get_by_test_id("stMetric").filter(has_text="Results cleared").get_by_test_id("stMetricValue")
            times = []
            for k in range(moves + 1):
                key, keep = ("Home", 0) if k % 2 == 0 else ("End", top)
                expected = len(tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(keep_recent_tokens=keep)).cleared_indices)
                thumb.focus()
                start = time.perf_counter()
                thumb.press(key)
                expect(metric).to_have_text(f"{expected:,}", timeout=30_000)
                page.get_by_test_id("stPlotlyChart").first.wait_for()
                page.wait_for_selector(idle, timeout=30_000)
                if k:  # the first move also warms caches
                    times.append(time.perf_counter() - start)
            browser.close()
        return times
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    print(slider_moves(Path(sys.argv[1])))
