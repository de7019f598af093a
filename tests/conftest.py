"""Fixtures for the whole suite: pytester runs share the local desktop's template."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

#: A closed port: a call there fails at once, after the SDK has loaded what it loads lazily.
_REFUSED = "http://127.0.0.1:9"


def _load_model_sdks() -> None:
    """Import the model SDKs in the test process itself, and make one refused call through
    each API our agents use, so that every module they load lazily is loaded here.

    A pytester run in this process drops the modules it imported when it ends. When it had
    been the first to load an SDK module, the package kept the dropped module as its
    attribute while the next import made a second copy, and the SDK then mixed the two
    copies' classes: google-genai sent ``tools: [{}]`` and let a 429 through unretried.
    """
    with contextlib.suppress(ImportError):
        import anthropic

        client = anthropic.Anthropic(api_key="unused", base_url=_REFUSED, max_retries=0, timeout=2)
        for create in (client.messages.create, client.beta.messages.create):
            with contextlib.suppress(Exception):
                create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])
    with contextlib.suppress(ImportError):
        import openai

        chat = openai.OpenAI(api_key="unused", base_url=_REFUSED, max_retries=0, timeout=2)
        with contextlib.suppress(Exception):
            chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with contextlib.suppress(Exception):
            chat.responses.create(model="m", input="x")
    with contextlib.suppress(ImportError):
        from google import genai
        from google.genai import errors, types  # noqa: F401

        options = types.HttpOptions(base_url=_REFUSED, retry_options=types.HttpRetryOptions(attempts=1))
        with contextlib.suppress(Exception):
            genai.Client(api_key="unused", http_options=options).models.generate_content(
                model="m", contents="x"
            )


_load_model_sdks()

#: The local provider's cache (its desktop template and run records) as this process sees
#: it, read before any pytester fixture points HOME at a test's own folder.
LOCAL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-osworld" / "local"


@pytest.fixture(autouse=True)
def _pytester_shares_the_desktop_template(request: pytest.FixtureRequest) -> None:
    """In a pytester test, link the test's own ``~/.cache/pytest-osworld/local`` to the real
    one. pytester sets HOME to the test's folder, so every plugin run it started on the
    local desktop built the desktop template again (about 80 s on a 2-core machine, in a
    test that otherwise takes 10 s). Asset caches stay the test's own."""
    if "pytester" in request.fixturenames:
        pytester: pytest.Pytester = request.getfixturevalue("pytester")
        LOCAL_CACHE.mkdir(parents=True, exist_ok=True)
        link = pytester.path / ".cache" / "pytest-osworld" / "local"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(LOCAL_CACHE, target_is_directory=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The VM tests first, in collection order. They run one module at a time (a machine-wide
    lock, ``integration/vm_lock.py``) for a quarter hour in all; started last they ended the
    run with the other workers idle, started first the first worker takes them (xdist hands
    out contiguous slices) while the others share the rest."""
    items.sort(key=lambda item: item.get_closest_marker("vagrant") is None)
