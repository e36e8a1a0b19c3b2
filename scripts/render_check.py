"""Open URL in Debian's Chromium (Playwright) and wait until the page shows every TEXT
given; exit 1 naming what was missing, or an error the page shows. Used by
scripts/check_package.sh on the installed app."""

from __future__ import annotations

import os
import sys

from playwright.sync_api import sync_playwright


def main(url: str, texts: list[str]) -> int:
    chromium = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu",
                                                                     "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        for text in texts:
            try:
                page.get_by_text(text, exact=False).first.wait_for(timeout=90_000)
            except Exception:
                print(f"not shown: {text!r}")
                return 1
        errors = page.locator("[data-testid='stException'], [data-testid='stAlertContentError']")
        if errors.count():
            print("the page shows an error: " + errors.first.inner_text()[:300])
            return 1
        print(f"shown: {', '.join(texts)}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
