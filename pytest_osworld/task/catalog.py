"""What OSWorld's own tasks need beyond their files, for honest selection (``-m "not network"``).

Most needs are read from a task's structure (:func:`needs_network`, :func:`needs_gdrive`).
Some tasks can only be solved by browsing the live web although nothing in the file says
so; OSWORLD-CONTRACT.md appendix A lists them (category A), by domain and id prefix.
"""

from __future__ import annotations

from pytest_osworld.task.model import Task
from pytest_osworld.task.urls import is_live

#: OSWorld tasks that need the live web or a Google account: domain -> id prefixes.
LIVE_WEB_TASKS: dict[str, frozenset[str]] = {
    "chrome": frozenset(
        [
            "06fe7178",
            "0d8b7de3",
            "121ba48f",
            "1704f00f",
            "2888b4e6",
            "3299584d",
            "35253b65",
            "368d9ba4",
            "44ee5668",
            "47543840",
            "59155008",
            "6c4c23a1",
            "7a5a7856",
            "7b6c7e24",
            "7f52cab9",
            "82279c77",
            "82bc8d6a",
            "9f3f70fc",
            "9f935cce",
            "a728a36e",
            "a96b564e",
            "b070486d",
            "b4f95342",
            "b7895e80",
            "c1fa57f3",
            "cabb3bae",
            "da46d875",
            "e1e75309",
            "f0b971a1",
            "f3b19d1e",
            "f5d96daf",
            "f79439ad",
            "fc6d8143",
        ]
    ),
    "multi_apps": frozenset(
        [
            "0c825995",
            "0e5303d4",
            "22a4636f",
            "236833a3",
            "26660ad1",
            "36037439",
            "3c8f201a",
            "3e3fc409",
            "3f05f3b9",
            "42d25c08",
            "42f4d1c7",
            "46407397",
            "48c46dc7",
            "48d05431",
            "4e9f0faf",
            "58565672",
            "5990457f",
            "67890eb6",
            "68a25bd4",
            "69acbb55",
            "74d5859f",
            "788b3701",
            "78aed49a",
            "7ff48d5b",
            "873cafdd",
            "897e3b53",
            "a0b9dc9c",
            "a82b78bb",
            "aad10cd7",
            "acb0f96b",
            "b337d106",
            "b52b40a5",
            "c7c1e4c3",
            "d1acdb87",
            "da52d699",
            "da922383",
            "dd60633f",
            "deec51c9",
            "df67aebb",
            "e135df7c",
            "e1fc0df3",
            "e2392362",
            "f8369178",
            "f8cfa149",
        ]
    ),
    "os": frozenset({"94d95f96"}),
    "vlc": frozenset({"bba3381f"}),
    "vs_code": frozenset({"4e60007a", "eabc805a"}),
}

GDRIVE_STEPS = frozenset({"googledrive", "login"})
LIVE_GETTERS = frozenset({"gotoRecreationPage_and_get_html_content", "googledrive_file"})


def needs_gdrive(task: Task) -> bool:
    """True if the task uses a Google Drive account."""
    steps = {s.type for s in task.config + task.evaluator.postconfig}
    return bool(steps & GDRIVE_STEPS) or any(g.type == "googledrive_file" for g in task.evaluator.getters())


def needs_network(task: Task) -> bool:
    """True if the task opens or reads live web pages, or can only be solved online."""
    if task.id[:8] in LIVE_WEB_TASKS.get(task.domain, frozenset()):
        return True
    for step in task.config:
        urls = step.parameters.get("urls_to_open", []) if step.type == "chrome_open_tabs" else []
        if any(isinstance(u, str) and is_live(u) for u in urls):
            return True
    for getter in task.evaluator.getters():
        if getter.type in LIVE_GETTERS:
            return True
        url = getter.config.get("url")
        if getter.type in ("page_info", "info_from_website", "pdf_from_url"):
            url = url or getter.config.get("path")
        if isinstance(url, str) and is_live(url):
            return True
    return needs_gdrive(task)
