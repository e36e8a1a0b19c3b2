"""A real `streamlit run app.py` on a free port and Debian's Chromium driven by Playwright.

In CI (CI=true) a missing browser is a failure, never a skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        if os.environ.get("CI", "").lower() == "true":
            raise pytest.UsageError(f"CI: Chromium is missing at {CHROMIUM}; .ci/run must install it (apt-get install chromium)")
        skip = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM} (outside CI only)")
        for item in items:
            if "e2e" in str(item.fspath):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}, "accept_downloads": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _healthy(url: str) -> bool:
    try:
        with _NO_PROXY.open(url + "/_stcore/health", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def streamlit_url(tmp_path_factory):
    port, log_path = _free_port(), tmp_path_factory.mktemp("st") / "server.log"
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless=true",
           f"--server.port={port}", "--server.address=127.0.0.1", "--browser.gatherUsageStats=false",
           "--server.fileWatcherType=none"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    url, t0 = f"http://127.0.0.1:{port}", time.monotonic()
    try:
        while not _healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited:\n{log_path.read_text()}")
            if time.monotonic() - t0 > 60:
                raise TimeoutError(log_path.read_text())
            time.sleep(0.1)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_for_app_idle(page, timeout: int = 60_000) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=timeout)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=timeout)


@pytest.fixture
def app_page(page, streamlit_url):
    page.goto(streamlit_url)
    wait_for_app_idle(page)
    page.get_by_test_id("stImage").first.wait_for(timeout=60_000)  # the token-usage chart (an SVG)
    return page
