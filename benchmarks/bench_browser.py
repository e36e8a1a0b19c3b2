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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'

# Checked on every animation frame: Playwright's expect() polls at 100 / 250 / 500 ms,
# which would round every timing up to its schedule instead of measuring it.
_SHOWN = """([label, want]) => {
  if (!document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]')) return false;
  for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
    if (label && !m.innerText.includes(label)) continue;
    const v = m.querySelector('[data-testid="stMetricValue"]');
    if (v && v.innerText.trim() === want) return true;
  }
  return false;
}"""


def _time_move(page, thumb, key: str, label: str, want: str) -> float:
    """Seconds from the key press until the metric shows ``want`` and the app is idle."""
    thumb.focus()
    start = time.perf_counter()
    thumb.press(key)
    page.wait_for_function(_SHOWN, arg=[label, want], polling="raf", timeout=30_000)
    return time.perf_counter() - start


def _serve(script: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
         "--server.fileWatcherType=none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    while not _healthy(url):
        if time.monotonic() - t0 > 60:
            raise TimeoutError("streamlit did not start")
        time.sleep(0.1)
    return proc, url


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


@contextmanager
def _opened(script: Path) -> Iterator[Any]:
    """A Chromium page on ``streamlit run script``, the server stopped after."""
    from playwright.sync_api import sync_playwright

    proc, url = _serve(script)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            yield page
            browser.close()
    finally:
        _stop(proc)


def bare_slider_moves(moves: int = 8) -> list[float]:
    """The same move, timed the same way, on a bare app (one slider, one metric): the floor."""
    with _opened(ROOT / "benchmarks" / "bare_app.py") as page:
        page.wait_for_selector(IDLE, timeout=60_000)
        thumb = page.get_by_test_id("stSlider").get_by_role("slider")
        times = []
        for k in range(moves + 1):
            key, expected = ("Home", "0") if k % 2 == 0 else ("End", "100")
            took = _time_move(page, thumb, key, "", expected)
            if k:
                times.append(took)
    return times


def slider_moves(path: Path, moves: int = 8) -> list[float]:
    from playwright.sync_api import expect

    t = tc.load(path)
    with _opened(ROOT / "app.py") as page:
        page.wait_for_selector(IDLE, timeout=60_000)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(path)
        expect(page.get_by_test_id("stCaptionContainer").filter(has_text=path.name)).to_be_visible(timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        thumb = page.get_by_test_id("stSlider").filter(has_text="Keep-recent token budget").get_by_role("slider")
        top = int(thumb.get_attribute("max") or "0")
        times = []
        for k in range(moves + 1):
            key, keep = ("Home", 0) if k % 2 == 0 else ("End", top)
            expected = len(tc.reduce_by_tokens(t.messages, tc.ClearToolResultConfig(keep_recent_tokens=keep)).cleared_indices)
            took = _time_move(page, thumb, key, "Changed at some call", f"{expected:,}")
            page.locator("svg[aria-label='token usage per message'], [data-testid=stPlotlyChart], [data-testid=stImage]").first.wait_for()
            if k:  # the first move also warms caches
                times.append(took)
    return times


def first_render(script: Path, ready: str) -> float:
    """Seconds from ``streamlit run`` to the first full render in Chromium: the server
    started, the page loaded, ``ready`` (a selector) shown and the script idle."""
    start = time.perf_counter()
    with _opened(script) as page:
        page.wait_for_selector(ready, timeout=120_000)
        page.wait_for_selector(IDLE, timeout=120_000)
        return time.perf_counter() - start


def start_ups(times: int = 3) -> tuple[float, float]:
    """The median first render of the bare app and of the inspector (on its first
    sample, priced: its verdict shown), run in turn."""
    bare, app = [], []
    for _ in range(times):
        bare.append(first_render(ROOT / "benchmarks" / "bare_app.py", '[data-testid="stSlider"]'))
        app.append(first_render(ROOT / "app.py", '[data-testid="stMetric"]'))
    return sorted(bare)[len(bare) // 2], sorted(app)[len(app) // 2]


if __name__ == "__main__":
    import statistics

    floor = statistics.median(bare_slider_moves())
    app = statistics.median(slider_moves(Path(sys.argv[1])))
    print(f"bare {floor * 1000:.0f} ms, inspector {app * 1000:.0f} ms, ratio {app / floor:.2f}")

