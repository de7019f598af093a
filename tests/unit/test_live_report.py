"""The HTML report lists a running run's live views by address, never with a secret."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_osworld.report.html import LIVE_NAME, live_views, write_report


def test_report_lists_live_views_while_live_json_exists(tmp_path: Path) -> None:
    (tmp_path / LIVE_NAME).write_text(
        json.dumps({"gw1": "http://127.0.0.1:4002/", "gw0": "http://127.0.0.1:4001/"})
    )
    assert live_views(tmp_path) == [
        {"worker": "gw0", "address": "http://127.0.0.1:4001/"},
        {"worker": "gw1", "address": "http://127.0.0.1:4002/"},
    ]
    page = write_report(tmp_path).read_text()
    assert (
        'Watching live: <a href="http://127.0.0.1:4001/">gw0</a> <a href="http://127.0.0.1:4002/">gw1</a>'
        in page
    )
    (tmp_path / LIVE_NAME).unlink()
    assert "Watching live" not in write_report(tmp_path).read_text()


def test_a_damaged_live_json_shows_nothing(tmp_path: Path) -> None:
    (tmp_path / LIVE_NAME).write_text("[not json")
    assert live_views(tmp_path) == []
    (tmp_path / LIVE_NAME).write_text(json.dumps(["http://127.0.0.1:1/"]))
    assert live_views(tmp_path) == []
