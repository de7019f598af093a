"""Runs INSIDE the oracle venv: OSWorld's own ``DesktopEnv`` driving a desktop of ours.

    .parity-venv/bin/python parity/oracle_side/e2e_oracle.py PORTS_JSON CACHE_DIR

A long-lived worker: it reads one JSON command per line on stdin and answers each with
one line ``@@E2E <json>`` on stdout (anything else on stdout is OSWorld's own chatter and
is ignored by the host). Commands:

``{"op": "reset", "task": {...}}``  ``DesktopEnv.reset(task_config=task)``
``{"op": "step", "action": "DONE" | "<pyautogui code>"}``  ``DesktopEnv.step(action, pause=0)``
``{"op": "evaluate"}``  ``DesktopEnv.evaluate()``; answers ``{"score": float}``
``{"op": "quit"}``

Every answer has ``ok``; a Python exception on OSWorld's side answers ``ok: false`` with
the exception's type and message (the host records it and counts the score as 0).

The provider shim: ``desktop_env.desktop_env.create_vm_manager_and_provider`` is replaced
(from the outside, the module is not edited) by a factory returning a manager and provider
whose ``get_ip_address`` answers ``127.0.0.1:<server>:<chromium>:<vnc>:<vlc>`` (the
colon-separated form ``DesktopEnv`` parses for its docker provider): the server port is
the host's token relay to our guest, the other two our local provider's relays. The env is
created with ``provider_name="docker"`` so it starts "clean" like a fresh container; the
host restores a fresh desktop before every ``reset``, so the shim's revert is a no-op.

Waits removed (pure waits only, nothing polls during them): ``DesktopEnv.step``'s
``pause`` (the host passes 0, as OSWorld's runners do for DONE) and the 5 s back-off
``DesktopEnv.reset`` sleeps before retrying a failed setup (a retry still happens). The
tasks' own ``sleep`` setup steps and every sleep inside controllers and getters are kept.

Metrics newer than 1.0.2: the two OSWorld's tasks use (``check_play_and_exit``,
``check_structure_sim_with_threshold``) are added to ``desktop_env.evaluators.metrics`` from
``metrics_upstream.py`` (level 1's reference scorers, written from upstream's documented
behaviour) when 1.0.2 lacks them; a reset answers which of the task's metrics are such
stand-ins (``upstream``), so the report can say so.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import types
from typing import Any

import desktop_env.desktop_env as osworld_env_module
from desktop_env.desktop_env import DesktopEnv
from desktop_env.evaluators import metrics as osworld_metrics
from metrics_upstream import UPSTREAM

MARK = "@@E2E "
VM_PATH = "pytest-osworld-local"


def make_shim(address: str) -> Any:
    """A provider factory for ``DesktopEnv`` that answers ``address`` and manages nothing."""
    from desktop_env.providers.base import Provider, VMManager

    class ShimManager(VMManager):
        def initialize_registry(self, **kwargs: Any) -> None:
            return None

        def add_vm(self, vm_path: str, **kwargs: Any) -> None:
            return None

        def delete_vm(self, vm_path: str, **kwargs: Any) -> None:
            return None

        def occupy_vm(self, vm_path: str, pid: int, **kwargs: Any) -> None:
            return None

        def list_free_vms(self, **kwargs: Any) -> list[str]:
            return [VM_PATH]

        def check_and_clean(self, **kwargs: Any) -> None:
            return None

        def get_vm_path(self, **kwargs: Any) -> str:
            return VM_PATH

    class ShimProvider(Provider):
        def start_emulator(self, path_to_vm: str, headless: bool, *args: Any) -> None:
            return None

        def get_ip_address(self, path_to_vm: str) -> str:
            return address

        def save_state(self, path_to_vm: str, snapshot_name: str) -> None:
            return None

        def revert_to_snapshot(self, path_to_vm: str, snapshot_name: str) -> str:
            return path_to_vm

        def stop_emulator(self, path_to_vm: str, *args: Any) -> None:
            return None

    def factory(provider_name: str, region: str, use_proxy: bool = False) -> tuple[Any, Any]:
        return ShimManager(), ShimProvider(region)

    return factory


def _no_wait_time() -> types.SimpleNamespace:
    """``time`` for desktop_env.desktop_env: the same clock, but ``sleep`` only records."""
    skipped: list[float] = []

    def sleep(seconds: float) -> None:
        skipped.append(float(seconds))

    return types.SimpleNamespace(sleep=sleep, time=time.time, monotonic=time.monotonic, skipped=skipped)


def add_upstream_metrics() -> set[str]:
    """Give 1.0.2's metrics module the upstream stand-ins it lacks; their names."""
    added = set()
    for name, scorer in UPSTREAM.items():
        if not hasattr(osworld_metrics, name):
            setattr(osworld_metrics, name, scorer)
            added.add(name)
    return added


def stand_ins(task: dict[str, Any], added: set[str]) -> list[str]:
    """The task's metric names that are upstream stand-ins, not 1.0.2's code."""
    func = task.get("evaluator", {}).get("func", [])
    names = func if isinstance(func, list) else [func]
    return sorted(set(names) & added)


def answer(payload: dict[str, Any]) -> None:
    """One answer line for the host."""
    sys.stdout.write(MARK + json.dumps(payload, default=str) + "\n")
    sys.stdout.flush()


def main() -> int:
    """Serve commands until ``quit`` or end of input."""
    ports = json.loads(sys.argv[1])
    cache_dir = sys.argv[2]
    address = f"127.0.0.1:{ports['server']}:{ports['chromium']}:{ports.get('vnc', 8006)}:{ports['vlc']}"
    osworld_env_module.create_vm_manager_and_provider = make_shim(address)
    added = add_upstream_metrics()
    no_wait = _no_wait_time()
    osworld_env_module.time = no_wait  # type: ignore[assignment]
    env = DesktopEnv(
        provider_name="docker",
        path_to_vm=VM_PATH,
        action_space="pyautogui",
        cache_dir=cache_dir,
        screen_size=(1920, 1080),
        headless=True,
        require_a11y_tree=False,
        os_type="Ubuntu",
        client_password="password",
    )
    answer({"ok": True, "op": "ready"})
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        op = cmd.get("op")
        if op == "quit":
            answer({"ok": True, "op": "quit"})
            break
        started = time.monotonic()
        try:
            if op == "reset":
                env.reset(task_config=cmd["task"])
                result: dict[str, Any] = {"upstream": stand_ins(cmd["task"], added)}
            elif op == "step":
                _, _, done, _info = env.step(cmd["action"], pause=0)
                result = {"done": bool(done)}
            elif op == "evaluate":
                result = {"score": float(env.evaluate())}
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as exc:  # OSWorld's side raising is a result to record
            answer(
                {
                    "ok": False,
                    "op": op,
                    "error": f"{type(exc).__name__}: {exc}"[:500],
                    "trace": traceback.format_exc()[-1500:],
                    "seconds": round(time.monotonic() - started, 3),
                }
            )
            continue
        result.update(
            ok=True, op=op, seconds=round(time.monotonic() - started, 3), skipped_sleep=sum(no_wait.skipped)
        )
        answer(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
