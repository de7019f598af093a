"""Chrome metrics (URLs, tabs, bookmarks, settings, cookies) and PDF/HTML/archive comparisons.

This module owns the browser-state metrics and the archive comparison; the PDF and HTML
comparisons live in ``_chrome_files`` and are re-exported here under their registered names.
"""

from __future__ import annotations

import os
import re
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

from pytest_osworld.evaluators.metrics._chrome_files import compare_htmls, compare_pdf_images, compare_pdfs
from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    missing,
    passed,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score, as_score
from pytest_osworld.task.urls import compare_urls

__all__ = [
    "EXTENSION_ALIASES",
    "MAX_ARCHIVE_BYTES",
    "MAX_ARCHIVE_MEMBERS",
    "check_enabled_experiments",
    "check_font_size",
    "check_history_deleted",
    "compare_archive",
    "compare_htmls",
    "compare_pdf_images",
    "compare_pdfs",
    "is_added_to_steam_cart",
    "is_cookie_deleted",
    "is_expected_active_tab",
    "is_expected_active_tab_approximate",
    "is_expected_bookmarks",
    "is_expected_installed_extensions",
    "is_expected_search_query",
    "is_expected_tabs",
    "is_expected_url_pattern_match",
    "is_shortcut_on_desktop",
]

#: Extension names a store page may show under another name.
EXTENSION_ALIASES = {"Zoom Chrome Extension": "Zoom for Google Chrome"}


def _url_of(value: Any) -> str | None:
    if isinstance(value, Mapping):
        url = value.get("url")
        return None if url is None else str(url)
    return None if value is None else str(value)


def is_expected_url_pattern_match(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every regex of ``rules["expected"]`` is found in the URL (a str or ``{"url": ...}``)."""
    url = _url_of(result)
    if url is None:
        return missing("URL")
    for pattern in rules_of(expected).get("expected", []):
        if re.search(pattern, url) is None:
            return failed(f"URL {url!r} does not match {pattern!r}")
    return passed(f"URL {url!r} matches every pattern")


def is_expected_active_tab(result: Any, expected: Any = None, **options: Any) -> Score:
    """The active tab's URL equals ``rules["url"]`` under OSWorld's URL comparison."""
    url = _url_of(result)
    if url is None:
        return missing("active tab URL")
    want = str(rules_of(expected).get("url", ""))
    return verdict(
        compare_urls(url, want),
        f"active tab is {url!r}",
        f"active tab is {url!r}, expected {want!r}",
    )


def is_expected_active_tab_approximate(result: Any, expected: Any = None, **options: Any) -> Score:
    """The active tab's URL equals ``rules["url"]`` once both query strings are dropped."""
    url = _url_of(result)
    if url is None:
        return missing("active tab URL")
    want = str(rules_of(expected).get("url", ""))
    return verdict(
        url.split("?", 1)[0] == want.split("?", 1)[0],
        f"active tab is {url!r}",
        f"active tab is {url!r}, expected {want!r} (query ignored)",
    )


def is_expected_search_query(result: Any, expected: Any = None, **options: Any) -> Score:
    """The active tab's URL contains a match of ``rules["expect"]["pattern"]``."""
    url = _url_of(result)
    if url is None:
        return missing("active tab URL")
    pattern = str(rules_of(expected).get("expect", {}).get("pattern", ""))
    return verdict(
        re.search(pattern, url) is not None,
        f"URL {url!r} matches",
        f"URL {url!r} does not match {pattern!r}",
    )


def is_expected_tabs(result: Any, expected: Any = None, **options: Any) -> Score:
    """The open tabs' URLs equal ``rules["urls"]`` in order, under OSWorld's URL comparison."""
    if not isinstance(result, list):
        return missing("open tabs")
    urls = [_url_of(tab) for tab in result]
    want = [str(u) for u in rules_of(expected).get("urls", [])]
    if len(urls) != len(want):
        return failed(f"{len(urls)} tabs open {short(urls)}, expected {len(want)}")
    for index, (got, url) in enumerate(zip(urls, want, strict=True)):
        if not compare_urls(got, url):
            return failed(f"tab {index} is {got!r}, expected {url!r}")
    return passed(f"the {len(want)} expected tabs are open")


def _bookmark_bar(bookmarks: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    roots = bookmarks.get("roots", bookmarks)
    return list(roots.get("bookmark_bar", {}).get("children", []))


def is_expected_bookmarks(result: Any, expected: Any = None, **options: Any) -> Score:
    """Chrome bookmarks match the rule: bar folder names, bar URLs, or the liked-authors folder.

    ``bookmark_bar_folders_names``: the set of folder names on the bar equals ``names``.
    ``bookmark_bar_websites_urls``: the set of URLs on the bar equals ``urls``.
    ``liked_authors_websites_urls``: the folder ``names[0]`` holds one URL from each group of
    alternatives in ``urls`` and nothing else.
    """
    if not isinstance(result, Mapping):
        return missing("bookmarks")
    rules = rules_of(expected)
    bar = _bookmark_bar(result)
    kind = rules.get("type")
    if kind == "bookmark_bar_folders_names":
        names = {str(b.get("name")) for b in bar if b.get("type") == "folder"}
        want = set(rules.get("names", []))
        return verdict(
            names == want,
            f"bar folders {sorted(names)}",
            f"bar folders {sorted(map(str, names))}, expected {sorted(want)}",
        )
    if kind == "bookmark_bar_websites_urls":
        urls = {str(b.get("url")) for b in bar if b.get("type") == "url"}
        want = set(rules.get("urls", []))
        return verdict(
            urls == want,
            f"bar URLs {sorted(urls)}",
            f"bar URLs {sorted(map(str, urls))}, expected {sorted(want)}",
        )
    if kind == "liked_authors_websites_urls":
        folder_name = rules.get("names", ["Liked Authors"])[0]
        folder = next((b for b in bar if b.get("type") == "folder" and b.get("name") == folder_name), None)
        if folder is None:
            return failed(f"no bookmark folder {folder_name!r} on the bar")
        links = [c.get("url") for c in folder.get("children", []) if c.get("type") == "url"]
        groups = [list(g) for g in rules.get("urls", [])]
        if len(links) != len(groups):
            return failed(f"folder {folder_name!r} has {len(links)} URLs, expected {len(groups)}")
        for group in groups:
            if sum(1 for u in links if u in group) != 1:
                return failed(f"folder {folder_name!r} needs exactly one of {short(group)}")
        return passed(f"folder {folder_name!r} holds one URL per author")
    return failed(f"unknown bookmarks rule type {kind!r}")


def is_added_to_steam_cart(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every item name of ``rules["items"]`` occurs in the cart page's content."""
    if result is None:
        return missing("page info")
    content = str(result.get("content", "")) if isinstance(result, Mapping) else str(result)
    for item in rules_of(expected).get("items", []):
        if item not in content:
            return failed(f"{item!r} is not in the cart")
    return passed("every item is in the cart")


def _desktop_entry(content: str) -> dict[str, str]:
    entry: dict[str, str] = {}
    for line in content.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in ("Name", "Exec", "URL") and key.strip() not in entry:
            entry[key.strip()] = value.strip()
    return entry


def is_shortcut_on_desktop(result: Any, expected: Any = None, **options: Any) -> Score:
    """Some ``.desktop`` file on the desktop has the expected ``Name=`` (or ``Exec=``/``URL=``).

    A match is exact, or a case-insensitive substring either way. ``result`` maps file
    names to file contents.
    """
    if not isinstance(result, Mapping):
        return missing("desktop shortcuts")
    rules = rules_of(expected)
    kind = str(rules.get("type", "name"))
    key = {"name": "Name", "exec": "Exec", "url": "URL"}.get(kind)
    if key is None:
        return failed(f"unknown shortcut rule type {kind!r}")
    want = str(rules.get(kind, ""))
    for file_name, content in result.items():
        value = _desktop_entry(str(content)).get(key)
        if value is not None and (
            value == want or want.lower() in value.lower() or value.lower() in want.lower()
        ):
            return passed(f"{file_name} has {key}={value!r}")
    return failed(f"no desktop shortcut has {key}={want!r} among {sorted(map(str, result))}")


def check_history_deleted(result: Any, expected: Any = None, **options: Any) -> Score:
    """No history entry's URL contains any of ``rules["keywords"]``."""
    if result is None:
        return missing("history")
    keywords = [str(k) for k in rules_of(expected).get("keywords", [])]
    for row in result:
        url = str(row[0] if isinstance(row, list | tuple) else row)
        hit = next((k for k in keywords if k in url), None)
        if hit is not None:
            return failed(f"history still has {url!r} (keyword {hit!r})")
    return passed(f"no history entry contains {keywords}")


def _cookie_host(row: Any) -> str:
    if isinstance(row, Mapping):
        return str(row.get("host_key", ""))
    return str(row[1]) if isinstance(row, list | tuple) and len(row) > 1 else str(row)


def is_cookie_deleted(result: Any, expected: Any = None, **options: Any) -> Score:
    """No cookie's host belongs to one of ``rules["domains"]`` (the domain or a subdomain)."""
    if result is None:
        return missing("cookies")
    domains = [str(d).lstrip(".").lower() for d in rules_of(expected).get("domains", [])]
    for row in result:
        host = _cookie_host(row).lstrip(".").lower()
        if any(host == d or host.endswith("." + d) for d in domains):
            return failed(f"a cookie of {host!r} is still stored")
    return passed(f"no cookie of {domains}")


def check_font_size(result: Any, expected: Any = None, **options: Any) -> Score:
    """Chrome's ``default_font_size`` equals ``rules["value"]`` or lies strictly in (min, max)."""
    if result is None:
        return missing("font size")
    size = result.get("default_font_size") if isinstance(result, Mapping) else result
    try:
        value = float(size)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return failed(f"font size is not a number: {short(size)}")
    rules = rules_of(expected)
    if rules.get("type") == "value":
        return verdict(
            value == float(rules["value"]),
            f"font size {value:g}",
            f"font size {value:g}, expected {rules['value']}",
        )
    low, high = float(rules.get("min", 0)), float(rules.get("max", 0))
    return verdict(
        low < value < high,
        f"font size {value:g} in ({low:g}, {high:g})",
        f"font size {value:g} not in ({low:g}, {high:g})",
    )


def is_expected_installed_extensions(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every name of ``rules["expected"]`` is among the installed extension names."""
    if result is None:
        return missing("installed extensions")
    installed = {EXTENSION_ALIASES.get(str(n), str(n)) for n in result}
    want = {EXTENSION_ALIASES.get(str(n), str(n)) for n in rules_of(expected).get("expected", [])}
    absent = sorted(want - installed)
    return verdict(not absent, f"all {len(want)} extensions installed", f"not installed: {absent}")


def check_enabled_experiments(result: Any, expected: Any = None, **options: Any) -> Score:
    """The enabled ``chrome://flags`` experiments equal ``rules["names"]``, in order.

    Chrome stores a flag with a choice as ``name@N``; the ``@N`` choice is dropped before
    comparing. ``rules["type"]`` must be ``"names"``, the only rule type.
    """
    if result is None:
        return missing("enabled experiments")
    rules = rules_of(expected)
    if rules.get("type") != "names" or "names" not in rules:
        return failed(f"the rule needs type 'names' and a 'names' list, got {short(rules)}")
    got = [str(n).split("@")[0] for n in result]
    want = list(rules["names"])
    return verdict(got == want, f"experiments {got}", f"experiments {got}, expected {want}")


MAX_ARCHIVE_BYTES = 2 << 30
MAX_ARCHIVE_MEMBERS = 20_000


def _safe_extract(archive: str, target: str) -> None:
    """Unpack ``archive`` (zip or tar) into ``target``; raises ``ValueError`` when it is unsafe.

    Refused, before anything is written: a member whose name is absolute or climbs out
    with ``..``, more than :data:`MAX_ARCHIVE_MEMBERS` members, or more than
    :data:`MAX_ARCHIVE_BYTES` of content. Tar links, devices and fifos are skipped (only
    regular files and folders are compared); zip members are always written as files.
    """
    root = os.path.realpath(target)

    def inside(name: str) -> bool:
        if os.path.isabs(name) or "\x00" in name:
            return False
        resolved = os.path.realpath(os.path.join(root, name))
        return resolved == root or resolved.startswith(root + os.sep)

    def check(names: list[str], sizes: list[int]) -> None:
        bad = [n for n in names if not inside(n)]
        if bad:
            raise ValueError(f"archive member escapes the target: {bad[0]!r}")
        if len(names) > MAX_ARCHIVE_MEMBERS:
            raise ValueError(f"archive has {len(names)} members, over the limit of {MAX_ARCHIVE_MEMBERS}")
        if sum(sizes) > MAX_ARCHIVE_BYTES:
            raise ValueError(
                f"archive unpacks to {sum(sizes)} bytes, over the limit of {MAX_ARCHIVE_BYTES} bytes"
            )

    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            # zipfile stops each member at its declared size, so the declared sizes bound the output.
            check([i.filename for i in infos], [i.file_size for i in infos])
            zf.extractall(root)
        return
    with tarfile.open(archive) as tf:
        members = [m for m in tf.getmembers() if m.isfile() or m.isdir()]
        check([m.name for m in members], [m.size for m in members])
        if hasattr(tarfile, "data_filter"):
            tf.extractall(root, members=members, filter="data")
            return
        # Python before 3.11.4 has no extraction filters (``filter=`` raised TypeError, so every
        # tar failed to unpack): the members are already vetted, and get plain permissions.
        for member in members:
            member.mode = 0o755 if member.isdir() else 0o644
        tf.extractall(root, members=members)


def _files_under(root: str) -> list[str]:
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def _archive_comparator(file_type: str) -> Callable[..., Any]:
    from pytest_osworld.evaluators.metrics import docs, general, gimp, slides, table, vlc

    comparators: dict[str, Callable[..., Any]] = {
        "text": general.diff_text_file,
        "pdf": compare_pdfs,
        "docx": docs.compare_docx_files,
        "ppt": slides.compare_pptx_files,
        "image": vlc.compare_images,
        "csv": table.compare_csv,
        "table": table.compare_table,
        "audio": vlc.compare_audios,
        "video": vlc.compare_videos,
        "image_list": gimp.compare_image_list,
    }
    if file_type not in comparators:
        raise ValueError(f"unknown archive file_type {file_type!r}; known: {sorted(comparators)}")
    return comparators[file_type]


def compare_archive(result: Any, expected: Any = None, **options: Any) -> Score:
    """Unpack both archives; same file lists; mean score of the per-file comparator. Fractional.

    ``file_type`` chooses the comparator (text, pdf, docx, ppt, image, csv, table, audio,
    video); ``file_path`` compares only that folder of each archive. Members that would
    unpack outside the temporary folder are refused.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    compare = _archive_comparator(str(options.get("file_type", "text")))
    sub = str(options.get("file_path", ""))
    if os.path.isabs(sub) or ".." in sub.replace("\\", "/").split("/"):
        return failed(f"option file_path {sub!r} must be a relative folder inside the archive")
    with tempfile.TemporaryDirectory() as tmp:
        got_dir, want_dir = os.path.join(tmp, "result"), os.path.join(tmp, "expected")
        try:
            _safe_extract(path or "", got_dir)
            _safe_extract(gold or "", want_dir)
        except (ValueError, OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
            return failed(f"cannot unpack: {exc}")
        got_dir, want_dir = os.path.join(got_dir, sub), os.path.join(want_dir, sub)
        got_files, want_files = _files_under(got_dir), _files_under(want_dir)
        if got_files != want_files:
            return failed(f"archive lists {short(got_files)}, expected {short(want_files)}")
        if not want_files:
            return passed("both archives are empty")
        scores = [
            as_score(compare(os.path.join(got_dir, f), os.path.join(want_dir, f)), "compare_archive")
            for f in want_files
        ]
    value = sum(s.value for s in scores) / len(scores)
    worst = min(zip(scores, want_files, strict=True), key=lambda pair: pair[0].value)
    return Score(value, f"mean {value:.3f} over {len(scores)} files; lowest {worst[1]}: {worst[0].reason}")
