"""The model agents' API plumbing: conversation turns, sampling and answers, failures as the
retry loop sees them, malformed answers, images as base64, and token prices.

Shared by :class:`~pytest_osworld.agents.llm.PromptAgent` and each provider's agent
(Anthropic, OpenAI, Gemini); nothing here calls a model.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

_T = TypeVar("_T")

#: Approximate list prices in USD per million tokens (input, output), by model-name
#: prefix; the longest matching prefix wins. They drift: override them per run with
#: ``--agent-arg price_in=... price_out=...``. Models not listed cost 0.
PRICES: dict[str, tuple[float, float]] = {
    "claude-3-opus": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-3-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-haiku-4": (1.0, 5.0),
    "gpt-4-vision-preview": (10.0, 30.0),
    "gpt-4-turbo": (10.0, 30.0),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gemini-1.5-pro": (1.25, 5.0),
    "gemini-1.5-flash": (0.075, 0.3),
    "gemini-2.0-flash": (0.1, 0.4),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash": (0.3, 2.5),
}


@dataclass(frozen=True)
class Turn:
    """One message of the conversation: text and PNG images."""

    role: Literal["user", "assistant"]
    text: str
    images: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters; None leaves one out of the request."""

    temperature: float | None
    top_p: float | None
    max_tokens: int


@dataclass(frozen=True)
class Completion:
    """A model's answer and the tokens it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class ApiFailure:
    """A provider error, as the retry loop sees it."""

    retryable: bool
    summary: str
    retry_after: float | None = None


class MalformedAnswer(Exception):
    """The API answered, but not with the kind of response asked for (a proxy's error page
    with status 200, a truncated body): retried like a server error, within the budget."""


def read_answer(kind: str, response: Any, read: Callable[[Any], _T]) -> _T:
    """``read(response)``, with a malformed response raised as :class:`MalformedAnswer`."""
    try:
        return read(response)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        shown = repr(response)
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        raise MalformedAnswer(
            f"the answer is not a {kind} ({type(exc).__name__}: {exc}); got {shown}"
        ) from exc


def price_for(model: str) -> tuple[float, float] | None:
    """The (input, output) USD price per million tokens of ``model``, if listed."""
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def png_base64(png: bytes) -> str:
    """The PNG as base64 text, as the providers' JSON carries images."""
    return base64.b64encode(png).decode("ascii")


def http_failure(status: int | None, message: str, headers: Mapping[str, str] | None) -> ApiFailure:
    """Classify an HTTP-level failure: 408, 409, 429 and 5xx (and no status) are retried."""
    retryable = status is None or status in (408, 409, 429) or status >= 500
    retry_after: float | None = None
    if headers is not None:
        raw = headers.get("retry-after")
        try:
            retry_after = float(raw) if raw is not None else None
        except ValueError:
            retry_after = None
    label = f"HTTP {status}" if status is not None else "no response"
    first_line = message.strip().splitlines()[0] if message.strip() else ""
    return ApiFailure(retryable, f"{label}: {first_line[:300]}", retry_after)


#: Where the SDKs' HTTP stacks keep their transport exceptions: (module, timeout class,
#: broken-connection classes). Only modules already imported are consulted: an exception
#: cannot come from a module nobody loaded.
TRANSPORT_ERRORS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("httpx", "TimeoutException", ("TransportError",)),
    ("httpx2", "TimeoutException", ("TransportError",)),
    ("httpcore", "TimeoutException", ("NetworkError", "ProtocolError")),
    ("httpcore2", "TimeoutException", ("NetworkError", "ProtocolError")),
)


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it (``__cause__``, else ``__context__``), outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 16:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def transport_failure(exc: BaseException) -> ApiFailure | None:
    """A timeout or a broken connection anywhere in ``exc``'s chain, as a retried failure.

    The SDKs wrap transport errors in their own classes, but not always (a raw
    ``httpcore2.ReadTimeout`` has been seen to escape one under heavy load), and a
    wrapped one may hide a timeout under a "connection error". So the whole chain is
    looked at, timeouts first: a timeout is reported as one whatever wraps it.
    """
    timeouts: list[type[BaseException]] = [TimeoutError]
    broken: list[type[BaseException]] = [ConnectionError]
    for module_name, timeout_name, broken_names in TRANSPORT_ERRORS:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        timeouts.append(getattr(module, timeout_name))
        broken.extend(getattr(module, name) for name in broken_names)
    chain = _exception_chain(exc)
    if any(isinstance(link, tuple(timeouts)) for link in chain):
        return ApiFailure(True, "timed out")
    for link in chain:
        if isinstance(link, tuple(broken)):
            return ApiFailure(True, f"connection failed: {type(link).__name__}: {link}")
    return None
