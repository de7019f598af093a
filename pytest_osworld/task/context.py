"""What setup steps and getters are given: the guest, the asset cache and the run's settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import Environment
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.model import Task

#: The end of a skip reason for a task that needs the live web, with the enabling option.
NO_NETWORK = (
    "this run has no network access (--provider-arg network=shared gives the local desktop the "
    "host's network; a vagrant VM has one with vm_network=nat outside a netns)"
)


@dataclass
class TaskContext:
    """The per-task context handed to setup steps and getters.

    ``work_dir`` is a host folder for files fetched from the environment (getters write
    there, and ``--rescore`` reads them back later).
    """

    task: Task
    guest: Guest
    assets: AssetCache
    work_dir: Path
    client_password: str = "password"
    screen_size: tuple[int, int] = (1920, 1080)
    #: Whether the environment may reach the live web (``Provider.live_network``).
    network: bool = False
    #: The DevTools endpoint of the environment's Chrome, when the provider exposes one.
    cdp_url: str | None = None
    #: ``time.time()`` when the episode last acted on the desktop, or None (no action
    #: yet, or a rescore). Getters of files an app writes some seconds after a change wait
    #: from it, as OSWorld's 20 s sleep before its evaluation lets them.
    last_action_at: float | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def for_environment(
        cls, task: Task, env: Environment, assets: AssetCache, work_dir: Path, network: bool = False
    ) -> TaskContext:
        """The context of ``task`` on a restored ``env`` (its guest, password, screen and
        Chrome endpoint), as the pytest items and the interactive envs build it."""
        return cls(
            task=task,
            guest=env.guest,
            assets=assets,
            work_dir=work_dir,
            client_password=env.client_password,
            screen_size=env.screen_size,
            cdp_url=env.extra.get("chromium_cdp_url"),
            network=network,
        )

    def placeholders(self) -> dict[str, str]:
        """OSWorld's placeholders for ``execute``/``command`` steps and their values."""
        width, height = self.screen_size
        return {
            "{CLIENT_PASSWORD}": self.client_password,
            "{SCREEN_WIDTH}": str(width),
            "{SCREEN_HEIGHT}": str(height),
            "{SCREEN_WIDTH_HALF}": str(width // 2),
            "{SCREEN_HEIGHT_HALF}": str(height // 2),
        }

    def substitute(self, text: str) -> str:
        """Replace every OSWorld placeholder in ``text``."""
        for key, value in self.placeholders().items():
            text = text.replace(key, value)
        return text
