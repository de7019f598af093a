"""What the container tests share: how an engine runs the image on this host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = REPO / "container" / "containers.conf"


def engine_env(engine: str, image: str) -> dict[str, str]:
    """This environment, with container/containers.conf where Podman cannot start a plain container."""
    env = dict(os.environ)
    if engine == "podman":
        plain = subprocess.run(
            ["podman", "run", "--rm", image, "--version"], capture_output=True, check=False
        )
        if plain.returncode != 0:
            env["CONTAINERS_CONF"] = str(CONTAINERS_CONF)
    return env
