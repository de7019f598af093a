"""Chrome setup steps over the DevTools protocol, and browsing history.

Chrome is started by the task's own ``launch`` steps (``google-chrome
--remote-debugging-port=1337`` and a ``socat`` bridge to 9222); these steps wait for its
DevTools endpoint with a bounded number of attempts instead of a fixed sleep.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_osworld.errors import EnvironmentFailure, NeedsCapability
from pytest_osworld.task.context import NO_NETWORK, TaskContext
from pytest_osworld.task.urls import compare_urls, is_live

HISTORY_PATH = "/home/user/.config/google-chrome/Default/History"
#: Microseconds between 1601-01-01 (Chrome's epoch) and 1970-01-01.
CHROME_EPOCH_OFFSET_US = 11_644_473_600 * 1_000_000
CONNECT_ATTEMPTS = 20
#: The pages a fresh Chrome window shows before any URL is opened.
BLANK_PAGES = ("about:blank", "chrome://newtab", "chrome://new-tab-page")


@contextmanager
def cdp_browser(ctx: TaskContext) -> Iterator[Any]:
    """A Playwright browser connected to the environment's Chrome, retrying until it is up."""
    if not ctx.cdp_url:
        raise EnvironmentFailure(
            "this environment exposes no Chrome DevTools endpoint, which the task's Chrome steps need"
        )
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        last: Exception | None = None
        for _ in range(CONNECT_ATTEMPTS):
            try:
                browser = pw.chromium.connect_over_cdp(ctx.cdp_url, timeout=5_000)
                break
            except PlaywrightError as exc:
                last = exc
                time.sleep(0.5)
        else:
            raise EnvironmentFailure(f"Chrome's DevTools at {ctx.cdp_url} did not answer: {last}")
        try:
            yield browser
        finally:
            browser.close()


def chrome_open_tabs_step(ctx: TaskContext, urls_to_open: list[str]) -> None:
    """Open each URL in a new tab of the running Chrome, then close the initial blank tab."""
    live = [u for u in urls_to_open if is_live(u)]
    if live and not ctx.network:
        raise NeedsCapability(f"the task opens {live[0]} from the live web; {NO_NETWORK}")
    with cdp_browser(ctx) as browser:
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        blank = [p for p in context.pages if p.url.startswith(BLANK_PAGES)]
        for url in urls_to_open:
            page = context.new_page()
            page.goto(url, wait_until="load", timeout=60_000)
        for page in blank:
            page.close()


def chrome_close_tabs_step(ctx: TaskContext, urls_to_close: list[str]) -> None:
    """Close the first open tab matching each URL."""

    with cdp_browser(ctx) as browser:
        for url in urls_to_close:
            pages = [page for context in browser.contexts for page in context.pages]
            match = next((page for page in pages if compare_urls(_current_url(page), url)), None)
            if match is not None:
                match.close()


def _current_url(page: Any) -> str:
    """The page's address as the page itself reports it (the protocol's may lag behind)."""
    try:
        return str(page.evaluate("location.href"))
    except Exception:
        return str(page.url)


def update_browse_history_step(ctx: TaskContext, history: list[dict[str, Any]]) -> None:
    """Add visits to Chrome's History database (Chrome must not be running)."""
    try:
        data = ctx.guest.read_file(HISTORY_PATH)
    except FileNotFoundError:
        raise EnvironmentFailure(
            f"no History database at {HISTORY_PATH}: the desktop's Chrome profile must have run once"
        ) from None
    now_us = int(time.time() * 1_000_000) + CHROME_EPOCH_OFFSET_US
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "History"
        path.write_bytes(data)
        with sqlite3.connect(path) as db:
            for entry in history:
                visit = now_us - int(entry["visit_time_from_now_in_seconds"]) * 1_000_000
                cursor = db.execute(
                    "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                    "VALUES (?, ?, 1, 0, ?, 0)",
                    (entry["url"], entry.get("title", ""), visit),
                )
                db.execute(
                    "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration)"
                    " "
                    "VALUES (?, ?, 0, 805306368, 0, 0)",
                    (cursor.lastrowid, visit),
                )
        ctx.guest.upload_file(HISTORY_PATH, path.read_bytes())


def googledrive_step(ctx: TaskContext, **params: Any) -> None:
    """Google Drive operations: not available without an account."""
    raise NeedsCapability(
        "the task prepares files in a Google Drive account (googledrive step); this run has no "
        "Google account configured"
    )


def login_step(ctx: TaskContext, **params: Any) -> None:
    """Logging in to a web platform (Google Drive): not available without an account."""
    raise NeedsCapability(
        f"the task logs in to {params.get('platform', 'a web platform')}; this run has no account configured"
    )
