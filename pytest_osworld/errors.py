"""The error hierarchy of pytest-osworld.

Each error carries its whole explanation in its message: what went wrong, where, and
what to do next. The pytest layer maps each family onto an outcome (see ARCHITECTURE.md
section 4): task-file errors are collection errors, environment errors are ERRORs,
evaluation errors are FAILs marked ``eval_error``, and ``NeedsCapability`` is a SKIP.
"""

from __future__ import annotations


class OSWorldError(Exception):
    """Base class of every error raised by pytest-osworld."""


class TaskFileError(OSWorldError):
    """A task file is malformed: names the file, the JSON path and what is wrong."""

    def __init__(self, path: str, json_path: str, problem: str) -> None:
        self.path = path
        self.json_path = json_path
        self.problem = problem
        super().__init__(f"{path}: at {json_path}: {problem}")


class UnknownNameError(OSWorldError):
    """A registry has no entry of that name (with a suggestion where one is close)."""

    def __init__(self, kind: str, name: str, suggestion: str | None, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.suggestion = suggestion
        shown = ", ".join(known[:12]) + (f", ... ({len(known)} in all)" if len(known) > 12 else "")
        hint = f"did you mean {suggestion!r}?" if suggestion else f"known: {shown}"
        super().__init__(f"unknown {kind} {name!r}; {hint}")


class EnvironmentFailure(OSWorldError):
    """The desktop environment broke (provider, snapshot, guest server): an ERROR."""


class SetupStepError(EnvironmentFailure):
    """A ``config`` setup step failed: an ERROR naming the step index, type and cause."""

    def __init__(self, index: int, total: int, step_type: str, cause: str) -> None:
        self.index = index
        self.step_type = step_type
        super().__init__(f"setup step {index}/{total} {step_type!r} failed: {cause}")


class GuestError(EnvironmentFailure):
    """The guest server answered with an error or did not answer at all."""

    def __init__(self, message: str, status: int | None = None) -> None:
        #: The HTTP status of the guest's answer, when there was one.
        self.status = status
        super().__init__(message)


class GuestUnreachable(GuestError):
    """The guest server did not answer at all (connection refused or reset, no socket,
    timeout), as opposed to answering with an error."""


class AgentFailure(OSWorldError):
    """The agent raised (for example its model API stayed down): the episode is an ERROR."""


class EvaluationError(OSWorldError):
    """A postconfig step or a getter failed: the task FAILS with outcome ``eval_error``."""


class GetterError(EvaluationError):
    """A getter could not fetch what the metric needs; the reason says why."""


class NeedsCapability(OSWorldError):
    """The task needs something this run does not allow: a SKIP with the enabling option."""


class AssetMissing(NeedsCapability):
    """Offline mode and an asset is not in the cache: the task is skipped, URL named."""

    def __init__(self, url: str, cache_path: str) -> None:
        self.url = url
        self.cache_path = cache_path
        super().__init__(
            f"asset {url} is not in the cache ({cache_path}) and --offline is set; "
            "pre-seed the cache or run without --offline"
        )
