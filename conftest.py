"""Repository-local policy only: the plugin works without this file."""

import contextlib
import importlib

pytest_plugins = ["pytester"]

# The HTTP stacks under the model SDKs are imported here, once per test process, before any
# in-process pytester run. A pytester run removes the modules first imported during it; httpx2
# caches httpcore2's exception classes on its first request, so a stack half re-imported after
# such a run let raw timeouts escape the SDKs (seen in CI: "ReadTimeout: timed out").
for _stack in ("httpcore", "httpx", "httpcore2", "httpx2"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_stack)
