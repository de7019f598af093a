"""One desktop of ours driven by OSWorld's own ``DesktopEnv``, then scored by both sides.

:class:`E2ESession` owns, for the whole run: our local provider (one desktop at a time;
restored before every task), the :class:`~pytest_osworld.providers.token_relay.TokenRelay`
that lets OSWorld's token-less client reach our guest, the asset server for our own
tasks' files, and one long-lived oracle worker (``parity/oracle_side/e2e_oracle.py`` in
the oracle venv) holding OSWorld's ``DesktopEnv``.

One case (:meth:`E2ESession.run_case`): restore a fresh desktop; OSWorld's
``DesktopEnv.reset(task)`` runs OSWorld's setup controller; the trajectory's actions go
through ``DesktopEnv.step``; ``DesktopEnv.evaluate()`` runs OSWorld's postconfig, getters
and metrics. Then, on the very same final state, our plugin's ``evaluate`` scores the
same trajectory with the task's postconfig left out (OSWorld's run of it has already
changed the desktop; running it twice would not be the state OSWorld scored). So both
scores read one desktop state: a difference is a difference of getters or metrics (or of
what OSWorld's getters left behind, noted per case), not of two runs' timing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from parity.e2e_tasks import AssetServer, E2ETask, for_oracle
from pytest_osworld.agent.actions import action_from_json
from pytest_osworld.evaluators.evaluate import evaluate
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig
from pytest_osworld.providers.token_relay import TokenRelay
from pytest_osworld.task.assets import AssetCache, default_cache_dir
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import load_task

MARK = "@@E2E "
ORACLE_SCRIPT = Path(__file__).resolve().parent / "oracle_side" / "e2e_oracle.py"


class OracleError(RuntimeError):
    """The oracle worker died or answered out of protocol."""


@dataclass
class CaseResult:
    """Both scores of one task and trajectory, and what happened on OSWorld's side."""

    task: str
    trajectory: str
    ours: float | None
    oracle: float | None
    oracle_error: str = ""
    ours_error: str = ""
    seconds: float = 0.0
    #: The task's metrics that OSWorld's side scored with level 1's upstream stand-ins.
    upstream: list[str] = dataclasses.field(default_factory=list)

    @property
    def agree(self) -> bool:
        """Equal within 1e-6 (an OSWorld exception counts as 0, as its runner records)."""
        oracle = 0.0 if self.oracle is None else self.oracle
        ours = 0.0 if self.ours is None else self.ours
        return abs(oracle - ours) <= 1e-6


class OracleWorker:
    """The oracle venv's Python running ``e2e_oracle.py``: one JSON line in, one out."""

    def __init__(self, python: Path, ports: dict[str, int], cache_dir: Path, log: IO[str]) -> None:
        self._proc = subprocess.Popen(
            [str(python), str(ORACLE_SCRIPT), json.dumps(ports), str(cache_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            bufsize=1,
        )
        self._read()  # "ready"

    def _read(self) -> dict[str, Any]:
        stdout = self._proc.stdout
        if stdout is None:
            raise OracleError("the oracle worker has no stdout")
        for line in stdout:
            if line.startswith(MARK):
                answer: dict[str, Any] = json.loads(line[len(MARK) :])
                return answer
        raise OracleError(f"the oracle worker exited (status {self._proc.wait()}); see its log")

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one command and return its answer."""
        stdin = self._proc.stdin
        if stdin is None:
            raise OracleError("the oracle worker has no stdin")
        stdin.write(json.dumps({"op": op, **fields}) + "\n")
        stdin.flush()
        return self._read()

    def close(self) -> None:
        """Ask the worker to quit; kill it if it does not within 10 s."""
        with contextlib.suppress(OracleError, OSError, ValueError):
            self.call("quit")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class E2ESession:
    """The local desktop, the relays and the oracle worker for one parity run."""

    def __init__(self, oracle_python: Path, tasks_dir: Path, work: Path | None = None) -> None:
        self.tasks_dir = tasks_dir
        self._own_work = work is None
        self.work = work or Path(tempfile.mkdtemp(prefix="osworld-e2e-"))
        self.provider: Provider = PROVIDERS.get("local")(
            ProviderConfig(worker_id="e2e", work_dir=str(self.work / "provider"))
        )
        self.env: Environment | None = None
        self.assets = AssetCache(default_cache_dir(), offline=True)
        self.log_path = self.work / "oracle.log"
        self._log = self.log_path.open("w")
        self.provider.start()
        self.relay = TokenRelay(self._target)
        self.asset_server = AssetServer(tasks_dir)
        try:
            self.env = self.provider.restore("init_state")
            extra = self.env.extra
            ports = {
                "server": self.relay.port,
                "chromium": _port(str(extra["chromium_cdp_url"])),
                "vlc": _port(str(extra["vlc_url"])),
            }
            self.oracle = OracleWorker(oracle_python, ports, self.work / "oracle-cache", self._log)
        except BaseException:
            self.relay.close()
            self.asset_server.close()
            self.provider.stop()
            self._log.close()
            raise
        self._count = 0

    def _target(self) -> tuple[str, str] | None:
        env = self.env
        if env is None:
            return None
        ctl = Path(str(env.extra["control_dir"]))
        return str(ctl / "guest.sock"), (ctl / "token").read_text().strip()

    def run_case(self, task: E2ETask, trajectory: str, actions: list[Any]) -> CaseResult:
        """Run ``actions`` on ``task`` through OSWorld's env; score with both sides."""
        started = time.monotonic()
        self._count += 1
        if self._count > 1:
            self.env = None
            self.env = self.provider.restore("init_state")
        result = CaseResult(task.name, trajectory, ours=None, oracle=None)
        answer = self.oracle.call("reset", task=for_oracle(task, self.tasks_dir, self.asset_server.url))
        if not answer["ok"]:
            result.oracle_error = f"reset: {answer['error']}"
        else:
            result.upstream = list(answer.get("upstream") or [])
            for action in actions:
                answer = self.oracle.call("step", action=action)
                if not answer["ok"]:
                    result.oracle_error = f"step: {answer['error']}"
                    break
            answer = self.oracle.call("evaluate")
            if answer["ok"]:
                result.oracle = float(answer["score"])
            else:
                result.oracle_error = f"evaluate: {answer['error']}"
        result.ours, result.ours_error = self._our_score(task, actions[-1] if actions else None)
        result.seconds = round(time.monotonic() - started, 2)
        return result

    def _our_score(self, task: E2ETask, last: Any) -> tuple[float | None, str]:
        env = self.env
        if env is None:
            return None, "no desktop"
        loaded = load_task(task.path)
        loaded = dataclasses.replace(loaded, evaluator=dataclasses.replace(loaded.evaluator, postconfig=()))
        work = self.work / "ours" / f"{self._count}"
        work.mkdir(parents=True, exist_ok=True)
        ctx = TaskContext(
            task=loaded,
            guest=env.guest,
            assets=self.assets,
            work_dir=work,
            client_password=env.client_password,
            screen_size=env.screen_size,
            cdp_url=env.extra.get("chromium_cdp_url"),
            network=False,
        )
        try:
            evaluation = evaluate(ctx, action_from_json(last) if last is not None else None)
        except Exception as exc:  # recorded, never hidden: our side raising is a finding
            return None, f"{type(exc).__name__}: {exc}"[:500]
        return evaluation.score, evaluation.error or ""

    def close(self) -> None:
        """Stop the oracle, the servers and the desktop."""
        self.oracle.close()
        self.relay.close()
        self.asset_server.close()
        self.env = None
        self.provider.stop()
        self._log.close()
        if self._own_work:
            shutil.rmtree(self.work, ignore_errors=True)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])
