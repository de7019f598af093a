"""URLs as tasks name them: whether one leaves this machine, and whether two name one page.

Setup steps (Chrome's tabs), getters (pages the evaluator loads) and metrics (the URL a tab
shows) all ask these questions, and the catalog asks the first at collection, to tell which
tasks need the network; so the answers live here, below all of them.
"""

from __future__ import annotations

import functools
import urllib.parse
from typing import Any

#: Host names that stay on this machine.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def is_live(url: str) -> bool:
    """True for http(s) URLs outside this machine."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("http", "https") and (parts.hostname or "") not in LOCAL_HOSTS


@functools.cache
def _suffix_extractor() -> Any:
    import tldextract

    # The bundled snapshot only: no cache directory, no download.
    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)


def _url_parts(url: str, full: bool) -> tuple[str, str, str, str, str]:
    if "://" not in url:
        url = "http://" + url
    parts = urllib.parse.urlsplit(url)
    host = _suffix_extractor()(parts.hostname or "")
    subdomain = "" if host.subdomain == "www" else host.subdomain
    netloc = ".".join(p for p in (subdomain, host.domain) if p)
    if not netloc:
        netloc = parts.hostname or ""
    path = parts.path.rstrip("/")
    if not full:
        return parts.scheme.lower(), netloc.lower(), path, "", ""
    return parts.scheme.lower(), netloc.lower(), path, parts.query, parts.fragment


def compare_urls(url1: str | None, url2: str | None, full: bool = True) -> bool:
    """Whether two URLs name the same page, the way OSWorld compares them.

    Scheme and host are case-insensitive, a lone ``www`` subdomain is dropped, the public
    suffix is ignored (``airbnb.com`` equals ``airbnb.com.sg``) and a trailing ``/`` does
    not count. Query and fragment count unless ``full`` is false. The public-suffix list
    is the one bundled with tldextract: nothing is fetched.
    """
    if url1 is None or url2 is None:
        return url1 is url2
    return _url_parts(url1, full) == _url_parts(url2, full)
