"""Chrome getters: the profile's files, the omnibox from the a11y tree, and pages over CDP.

The profile lives where OSWorld's image keeps it, ``~/.config/google-chrome/Default``;
the local desktop's ``google-chrome`` (Chromium) uses that folder too. Getters that
read a page use Playwright's ``connect_over_cdp`` against the environment's DevTools
endpoint (``TaskContext.cdp_url``); pages on the live web are refused offline.
"""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_osworld.errors import GetterError, NeedsCapability
from pytest_osworld.task.context import NO_NETWORK, TaskContext
from pytest_osworld.task.paths import contained_path
from pytest_osworld.task.urls import is_live

PROFILE = "/home/user/.config/google-chrome/Default"
OMNIBOX_NAMES = ("Address and search bar",)
OMNIBOX_ATTEMPTS = 10
#: Chrome's ``browser.theme.color_scheme`` values.
COLOR_SCHEMES = {0: "system", 1: "light", 2: "dark"}


#: Chrome writes a changed profile file (Preferences, Secure Preferences, Bookmarks, History)
#: up to this many seconds after the change: Chromium's commit interval for them.
PROFILE_COMMIT_SECONDS = 10.0
#: Beyond the commit interval, for the write itself.
COMMIT_MARGIN_SECONDS = 1.0


def await_profile_commit(
    ctx: TaskContext,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> float:
    """Wait until Chrome has written what the episode's last action changed; the seconds waited.

    OSWorld evaluates 20 s after the episode's end; here the evaluation starts at once, so a
    getter of a profile file waits out Chrome's commit interval from the last action (not at
    all when that is long past, or when there was none, as in a rescore). ``clock`` and
    ``sleep`` default to ``time.time`` and ``time.sleep``.
    """
    if ctx.last_action_at is None:
        return 0.0
    wait = ctx.last_action_at + PROFILE_COMMIT_SECONDS + COMMIT_MARGIN_SECONDS - (clock or time.time)()
    if wait <= 0:
        return 0.0
    (sleep or time.sleep)(wait)
    return wait


def _profile_file(ctx: TaskContext, name: str) -> bytes:
    await_profile_commit(ctx)
    try:
        return ctx.guest.read_file(f"{PROFILE}/{name}")
    except FileNotFoundError:
        raise GetterError(f"Chrome's {name} is not in the profile ({PROFILE}); has Chrome run?") from None


def preferences(ctx: TaskContext) -> dict[str, Any]:
    """Chrome's ``Preferences`` JSON."""
    try:
        data = json.loads(_profile_file(ctx, "Preferences"))
    except json.JSONDecodeError as exc:
        raise GetterError(f"Chrome's Preferences is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise GetterError("Chrome's Preferences is not a JSON object")
    return data


def _dig(data: Any, *keys: str, default: Any = None) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def _flag(value: Any) -> str:
    return "true" if bool(value) else "false"


def get_profile_name(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The profile's display name."""
    return str(_dig(preferences(ctx), "profile", "name", default=""))


def get_chrome_font_size(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """``webkit.webprefs`` font sizes, with Chrome's defaults for those never changed."""
    sizes = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 0}
    sizes.update(_dig(preferences(ctx), "webkit", "webprefs", default={}) or {})
    return sizes


def get_default_search_engine(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The default search engine's short name (``Google`` when never changed)."""
    name = _dig(preferences(ctx), "default_search_provider_data", "template_url_data", "short_name")
    return str(name) if name else "Google"


def get_enable_do_not_track(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``"true"`` when Do Not Track is on."""
    return _flag(preferences(ctx).get("enable_do_not_track", False))


def get_enable_safe_browsing(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``"true"`` when Safe Browsing is on (Chrome's default)."""
    return _flag(_dig(preferences(ctx), "safebrowsing", "enabled", default=True))


def get_new_startup_page(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``"true"`` when Chrome opens the New Tab page at start (restore_on_startup 5 or unset)."""
    value = _dig(preferences(ctx), "session", "restore_on_startup", default=5)
    return _flag(value == 5)


def get_data_delete_automacally(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``"true"`` when site data is deleted on close (cookies content setting 4, session only).

    OSWorld passed whenever any default content setting existed; this checks the one
    setting that deletes data when the browser closes.
    """
    value = _dig(preferences(ctx), "profile", "default_content_setting_values", "cookies")
    return _flag(value == 4)


def get_chrome_appearance_mode_ui(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``light``, ``dark`` or ``system``: the theme mode from the profile's preferences."""
    prefs = preferences(ctx)
    value = _dig(prefs, "browser", "theme", "color_scheme2", default=None)
    if value is None:
        value = _dig(prefs, "browser", "theme", "color_scheme", default=0)
    return COLOR_SCHEMES.get(int(value), "system")


def _extensions(ctx: TaskContext) -> dict[str, Any]:
    """Extension entries by id, from ``Preferences`` and ``Secure Preferences`` together.

    Chrome keeps its component extensions in one file and, where preference protection is
    on, the user's extensions in the other; an entry in both is taken from the second.
    """
    merged: dict[str, Any] = {}
    secure = json.loads(_profile_file_or_empty(ctx, "Secure Preferences") or b"{}")
    for prefs in (preferences(ctx), secure):
        settings = _dig(prefs, "extensions", "settings", default={})
        if isinstance(settings, dict):
            merged.update(settings)
    return merged


def _profile_file_or_empty(ctx: TaskContext, name: str) -> bytes:
    await_profile_commit(ctx)
    try:
        return ctx.guest.read_file(f"{PROFILE}/{name}")
    except FileNotFoundError:
        return b""


def get_find_unpacked_extension_path(ctx: TaskContext, config: dict[str, Any]) -> list[str]:
    """Paths of the extensions loaded unpacked (location 4)."""
    return [str(e["path"]) for e in _extensions(ctx).values() if e.get("location") == 4 and "path" in e]


def get_find_installed_extension_name(ctx: TaskContext, config: dict[str, Any]) -> list[str]:
    """Names of the installed extensions (Chrome's own components left out)."""
    names = []
    for entry in _extensions(ctx).values():
        name = _dig(entry, "manifest", "name")
        if name and entry.get("location") not in (5, 10):
            names.append(str(name))
    return names


def get_bookmarks(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """The ``roots`` of Chrome's Bookmarks file (empty folders when there is none)."""
    raw = _profile_file_or_empty(ctx, "Bookmarks")
    if not raw:
        return {"bookmark_bar": {"children": []}, "other": {"children": []}}
    roots = json.loads(raw).get("roots", {})
    return roots if isinstance(roots, dict) else {}


def _sqlite_copy(ctx: TaskContext, name: str, dest: str) -> Path:
    target = contained_path(ctx.work_dir, dest, what="dest", error=GetterError)
    target.write_bytes(_profile_file(ctx, name))
    return target


def _query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return list(db.execute(sql).fetchall())
    except sqlite3.DatabaseError as exc:
        raise GetterError(f"{path.name} is not a readable SQLite database: {exc}") from exc


def get_history(ctx: TaskContext, config: dict[str, Any]) -> list[list[Any]]:
    """``[url, title, last_visit_time]`` of every history entry."""
    path = _sqlite_copy(ctx, "History", config.get("dest", "History.sqlite"))
    return [list(row) for row in _query(path, "SELECT url, title, last_visit_time FROM urls")]


def get_cookie_data(ctx: TaskContext, config: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cookie as ``{host_key, name, path}``, from the profile's ``Default/Cookies``
    (where Chrome and Chromium on Linux keep them, and where OSWorld's getter reads)."""
    path = _sqlite_copy(ctx, "Cookies", config.get("dest", "Cookies"))
    rows = _query(path, "SELECT host_key, name, path FROM cookies")
    return [{"host_key": h, "name": n, "path": p} for h, n, p in rows]


def get_shortcuts_on_desktop(ctx: TaskContext, config: dict[str, Any]) -> dict[str, str]:
    """``{file name: content}`` of every ``.desktop`` file on the user's desktop."""
    desktop = ctx.guest.desktop_path()
    try:
        tree = ctx.guest.list_directory(desktop)
    except FileNotFoundError:
        return {}
    shortcuts = {}
    for child in tree.get("children", []):
        name = str(child.get("name", ""))
        if name.endswith(".desktop") and child.get("type") != "directory":
            shortcuts[name] = ctx.guest.read_file(f"{desktop}/{name}").decode("utf-8", "replace")
    return shortcuts


# -- the omnibox, read from the accessibility tree ---------------------------------


def omnibox_text(tree_xml: str) -> str | None:
    """The text of Chrome's address bar in an OSWorld accessibility tree, if present."""
    from lxml import etree

    try:
        root = etree.fromstring(tree_xml.encode())
    except etree.XMLSyntaxError as exc:
        raise GetterError(f"the accessibility tree is not valid XML: {exc}") from exc
    for element in root.iter("entry"):
        if element.get("name") in OMNIBOX_NAMES:
            return "".join(element.itertext()).strip()
    return None


def active_url(ctx: TaskContext, config: dict[str, Any]) -> str:
    """``goto_prefix`` (default ``https://``) plus the omnibox text.

    Chrome may still be starting (its ``launch`` step does not wait), so the tree is read
    again, a bounded number of times, until the address bar shows.
    """
    text = None
    for attempt in range(OMNIBOX_ATTEMPTS):
        text = omnibox_text(ctx.guest.accessibility_tree())
        if text is not None:
            break
        if attempt + 1 < OMNIBOX_ATTEMPTS:
            time.sleep(1.0)
    if text is None:
        raise GetterError("no Chrome address bar in the accessibility tree; is Chrome open?")
    prefix = config.get("goto_prefix", "https://")
    if "://" in text or text.startswith(("chrome:", "about:", "file:")):
        return text
    return f"{prefix}{text}"


def get_active_url_from_accessTree(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The active tab's URL as shown in the address bar."""
    return active_url(ctx, config)


def get_active_tab_url_parse(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """Selected query parameters of the active URL (``parse_keys``, ``replace``, ``split_list``).

    With ``split_list`` a value is a comma-separated list (``modelList=a,b,c``) and is
    returned split; otherwise the parameter's first value is returned as it is.
    """
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(active_url(ctx, config)).query)
    parsed: dict[str, Any] = {}
    for key in config.get("parse_keys", []):
        values = query.get(key)
        if values is None:
            continue
        parsed[key] = values[0].split(",") if config.get("split_list") else values[0]
    for old, new in (config.get("replace") or {}).items():
        if old in parsed:
            parsed[new] = parsed.pop(old)
    return parsed


def get_url_dashPart(ctx: TaskContext, config: dict[str, Any]) -> Any:
    """One ``/``-separated part of the active URL (``partIndex``), as a string or ``{key: part}``."""
    parts = urllib.parse.urlsplit(active_url(ctx, config)).path.split("/")
    try:
        part = parts[int(config["partIndex"])]
    except (IndexError, ValueError) as exc:
        raise GetterError(f"url_dashPart: no part {config.get('partIndex')} in {parts}") from exc
    if config.get("needDeleteId"):
        part = part.rsplit("-", 1)[0]
    if config.get("returnType") == "json":
        return {config.get("key", "part"): part}
    return part


def get_url_path_parse(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """Facets in a store URL's path: ``/key/value`` pairs and bare ``/key`` flags."""
    segments = [s for s in urllib.parse.urlsplit(active_url(ctx, config)).path.split("/") if s]
    found: dict[str, Any] = {}
    for key in config.get("parse_keys", []):
        if key in segments:
            index = segments.index(key)
            following = segments[index + 1] if index + 1 < len(segments) else None
            found[key] = True if following is None or following in config["parse_keys"] else following
    return found


# -- pages, through the DevTools protocol ---------------------------------------------


@contextmanager
def _browser(ctx: TaskContext) -> Iterator[Any]:
    if not ctx.cdp_url:
        raise GetterError(
            "this environment exposes no Chrome DevTools endpoint; start Chrome with "
            "--remote-debugging-port (the task's setup does) and use a provider that reaches it"
        )
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise GetterError("Chrome getters need Playwright: pip install 'pytest-osworld[chrome]'") from exc
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.connect_over_cdp(ctx.cdp_url, timeout=30_000)
        except PlaywrightError as exc:
            raise GetterError(f"cannot reach Chrome's DevTools at {ctx.cdp_url}: {exc}") from exc
        try:
            yield browser
        finally:
            browser.close()


def _refuse_live(ctx: TaskContext, url: str) -> None:
    if is_live(url) and not ctx.network:
        raise NeedsCapability(f"the evaluator loads {url} from the live web; {NO_NETWORK}")


def tab_strip_titles(tree_xml: str) -> list[str]:
    """The names of Chrome's tabs in the order the tab strip shows them (from the a11y tree)."""
    from lxml import etree

    try:
        root = etree.fromstring(tree_xml.encode())
    except etree.XMLSyntaxError:
        return []
    return [
        str(tab.get("name", "")) for strip in root.iter("page-tab-list") for tab in strip.iter("page-tab")
    ]


def _in_strip_order(tabs: list[dict[str, str]], strip: list[str]) -> list[dict[str, str]]:
    """Order tabs as the tab strip shows them; the DevTools protocol lists them in its own order.

    A strip entry is named after the page's title (Chrome may append details such as
    memory use); pages that match no entry keep their relative order at the end.
    """
    remaining = list(range(len(tabs)))
    ordered: list[dict[str, str]] = []
    for name in strip:
        match = next((i for i in remaining if tabs[i]["title"] and name.startswith(tabs[i]["title"])), None)
        if match is not None:
            remaining.remove(match)
            ordered.append(tabs[match])
    return ordered + [tabs[i] for i in remaining]


def get_open_tabs_info(ctx: TaskContext, config: dict[str, Any]) -> list[dict[str, str]]:
    """``[{title, url}]`` of every open tab, in the tab strip's order."""
    tabs = []
    with _browser(ctx) as browser:
        for context in browser.contexts:
            for page in context.pages:
                if page.url.startswith(("devtools://", "chrome-extension://")):
                    continue
                try:
                    page.wait_for_load_state("load", timeout=10_000)
                    title = page.title()
                except Exception:
                    title = "Load timeout"
                tabs.append({"title": title, "url": page.url})
    return _in_strip_order(tabs, tab_strip_titles(ctx.guest.accessibility_tree()))


def _page_content(ctx: TaskContext, url: str) -> dict[str, str]:
    _refuse_live(ctx, url)
    with _browser(ctx) as browser:
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        page = context.new_page()
        try:
            page.goto(url, wait_until="load", timeout=60_000)
            return {"title": page.title(), "url": page.url, "content": page.content()}
        finally:
            page.close()


def get_active_tab_info(ctx: TaskContext, config: dict[str, Any]) -> dict[str, str]:
    """``{title, url, content}`` of the active tab's URL, loaded again in a new tab."""
    return _page_content(ctx, active_url(ctx, config))


def get_page_info(ctx: TaskContext, config: dict[str, Any]) -> dict[str, str]:
    """``{title, url, content}`` of ``url``."""
    return _page_content(ctx, str(config["url"]))


def get_pdf_from_url(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """``url`` printed to PDF by the environment's Chrome, saved as ``dest``."""
    url = str(config["path"])
    _refuse_live(ctx, url)
    target: Path = (ctx.work_dir / str(config["dest"])).resolve()
    with _browser(ctx) as browser:
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        page = context.new_page()
        try:
            page.goto(url, wait_until="load", timeout=60_000)
            target.write_bytes(page.pdf())
        finally:
            page.close()
    return target


def get_active_tab_html_parse(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """Texts picked from the active tab by class, xpath or input selectors (``category``)."""
    url = active_url(ctx, config)
    _refuse_live(ctx, url)
    category = config.get("category")
    found: dict[str, Any] = {}
    with _browser(ctx) as browser:
        pages = [p for c in browser.contexts for p in c.pages if p.url.rstrip("/") == url.rstrip("/")]
        if not pages:
            raise GetterError(f"no open tab shows {url}")
        page = pages[0]
        if category == "xpath":
            for xpath, key in config.get("xpathObject", {}).items():
                element = page.locator(f"xpath={xpath}")
                found[key] = element.first.inner_text().strip() if element.count() else ""
        elif category == "input":
            for xpath, key in config.get("inputObject", {}).items():
                element = page.locator(f"xpath={xpath}")
                found[key] = element.first.input_value().strip() if element.count() else ""
        elif category in ("class", "class&url"):
            for cls, key in config.get("class_singleObject", {}).items():
                element = page.locator(f".{cls}")
                found[key] = element.first.inner_text().strip() if element.count() else ""
            for cls, keys in config.get("class_multiObject", {}).items():
                texts = [t.strip() for t in page.locator(f".{cls}").all_inner_texts()]
                for index, key in keys.items():
                    found[key] = texts[int(index)] if int(index) < len(texts) else ""
        else:
            raise GetterError(f"active_tab_html_parse: category {category!r} is not supported")
    return found


def get_info_from_website(ctx: TaskContext, config: dict[str, Any]) -> list[str]:
    """Texts or attributes read from a page by selector (``infos``)."""
    url = str(config["url"])
    _refuse_live(ctx, url)
    values = []
    with _browser(ctx) as browser:
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        page = context.new_page()
        try:
            page.goto(url, wait_until="load", timeout=60_000)
            for info in config.get("infos", []):
                locator = page.locator(info["selector"]).first
                if info.get("action") == "attribute":
                    values.append(locator.get_attribute(info["attribute"]) or "")
                else:
                    values.append(locator.inner_text().strip())
        finally:
            page.close()
    return values


def get_gotoRecreationPage_and_get_html_content(ctx: TaskContext, config: dict[str, Any]) -> Any:
    """Scripted browsing of recreation.gov: needs the live web."""
    raise NeedsCapability(
        "the evaluator browses recreation.gov live (a search scripted against that site's own "
        "page structure), which pytest-osworld does not implement: the task skips with any network setting"
    )
