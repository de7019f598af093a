"""The Slurm example (examples/slurm) on a real Slurm: a one-node cluster of Debian's
``slurm-wlm`` on loopback, with MUNGE, its configuration generated in a temporary folder.

The two job scripts are submitted as written, with only what a site changes substituted:
the partition, the task folder (``tasks/os``) and the shard count (2, in both places the
script names it). The array's two shards and the merge job (``afterok``) run the container
image with Podman, as on a real cluster; the merged results must equal one plain run of the
same tasks in the same image: outcomes, scores and the summary. The daemons are stopped by
their own PIDs at the end.

Slow (the image build the first time, then a desktop template built in each shard's
container), so it runs only when asked, as root:
``OSWORLD_SLURM_TESTS=1 .venv/bin/pytest tests/container/test_slurm_example.py``.
It installs ``slurm-wlm`` and ``munge`` with apt when they are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from engines import REPO, engine_env

pytestmark = [
    pytest.mark.container,
    pytest.mark.skipif(
        os.environ.get("OSWORLD_SLURM_TESTS") != "1",
        reason="runs a Slurm cluster and the container image (minutes): run with OSWORLD_SLURM_TESTS=1",
    ),
]

PARTITION = "osworld"
NODE = "osworld-node"
#: The partition line every job script gets: (text as written, text here).
PARTITION_LINE = ("#SBATCH --nodes=1\n", f"#SBATCH --nodes=1\n#SBATCH --partition={PARTITION}\n")
#: What a site changes in each example script, besides the partition.
SUBSTITUTIONS = {
    "osworld-array.sbatch": [
        ("#SBATCH --array=1-4\n", "#SBATCH --array=1-2\n"),
        ('--shard "${SLURM_ARRAY_TASK_ID}/4"', '--shard "${SLURM_ARRAY_TASK_ID}/2"'),
        ("/opt/pytest-osworld/tasks \\\n", "/opt/pytest-osworld/tasks/os \\\n"),
    ],
    "merge.sbatch": [],
}
#: The summary's last lines name the folder; the rest must be equal.
SUMMARY_TITLE = "OSWorld summary"


@dataclass
class Cluster:
    """A running one-node cluster: its configuration file and daemons."""

    conf: Path
    daemons: dict[str, subprocess.Popen[bytes]]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment Slurm's commands need (SLURM_CONF) plus ``extra``."""
        return {**os.environ, "SLURM_CONF": str(self.conf), **(extra or {})}

    def run(self, *argv: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
        """Run a Slurm command; its stdout (a failure raises with stderr)."""
        done = subprocess.run(
            argv, env=env or self.env(), cwd=cwd, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr}"
        return done.stdout.strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_installed() -> None:
    """Debian's slurm-wlm and munge, installed with apt when missing (root only)."""
    if all(shutil.which(tool) for tool in ("slurmctld", "slurmd", "sbatch", "munged", "mungekey")):
        return
    if os.geteuid() != 0:
        pytest.skip("needs Debian's slurm-wlm and munge, or root to install them")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "slurm-wlm", "munge"]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=True)
        subprocess.run(install, env=env, capture_output=True, check=True)


def slurm_conf(folder: Path, munge_socket: Path) -> str:
    """One node (this machine's cores and memory overstated, so the example's requests fit),
    one partition, no cgroups and no accounting, everything under ``folder``."""
    host = socket.gethostname().split(".")[0]
    return f"""\
ClusterName=osworldtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SlurmdParameters=config_overrides
NodeName={NODE} NodeAddr=127.0.0.1 CPUs=8 RealMemory=40000 State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """munged, slurmctld and slurmd for one node on loopback; stopped by PID afterwards."""
    ensure_installed()
    folder = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool", "munge"):
        (folder / sub).mkdir(mode=0o700)
    key, munge_socket = folder / "munge" / "munge.key", folder / "munge" / "munge.sock"
    subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True)
    key.chmod(0o600)
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, munge_socket))
    daemons: dict[str, subprocess.Popen[bytes]] = {}

    def start(name: str, argv: list[str]) -> None:
        log = (folder / f"{name}.out").open("wb")
        daemons[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)

    try:
        start("munged", ["munged", "--foreground", "--force", f"--key-file={key}", f"--socket={munge_socket}",
                         f"--pid-file={folder}/munge/munged.pid", f"--seed-file={folder}/munge/seed"])  # fmt: skip
        deadline = time.monotonic() + 30
        while not munge_socket.exists():
            assert time.monotonic() < deadline, (folder / "munged.out").read_text()
            time.sleep(0.2)
        start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(conf)])
        start("slurmd", ["slurmd", "-D", "-f", str(conf), "-N", NODE])
        cluster = Cluster(conf, daemons)
        deadline = time.monotonic() + 60
        while True:
            state = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=cluster.env(),
                                   capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
            if state == "idle":
                break
            for name, proc in daemons.items():
                assert proc.poll() is None, f"{name} exited: " + (folder / f"{name}.out").read_text()[-2000:]
            assert time.monotonic() < deadline, (
                f"the node is {state!r}, not idle: " + (folder / "slurmctld.log").read_text()[-2000:]
            )
            time.sleep(0.5)
        yield cluster
    finally:
        if daemons.get("slurmctld") and daemons["slurmctld"].poll() is None:
            subprocess.run(["scancel", "--partition", PARTITION], env={**os.environ, "SLURM_CONF": str(conf)},
                           capture_output=True, check=False)  # fmt: skip
        for name in ("slurmd", "slurmctld", "munged"):
            proc = daemons.get(name)
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def as_written(source: Path, target: Path) -> Path:
    """The example script with only the partition and its :data:`SUBSTITUTIONS` changed (each
    must apply, so an edited example cannot silently run unsubstituted)."""
    text = source.read_text()
    for old, new in [PARTITION_LINE, *SUBSTITUTIONS[source.name]]:
        assert text.count(old) == 1, f"{source.name} no longer has {old!r} once"
        text = text.replace(old, new)
    target.write_text(text)
    return target


def outcomes(results: Path) -> dict[tuple[str, str, int], tuple[str, float | None]]:
    """Each task's outcome and score, from its result.json."""
    found = {}
    for path in results.rglob("result.json"):
        data = json.loads(path.read_text())
        found[(data["domain"], data["task_id"], data["repeat"])] = (data["outcome"], data["score"])
    return found


def summary(lines: list[str]) -> list[str]:
    """The summary's lines after its title, without the closing folder lines."""
    start = next(i for i, line in enumerate(lines) if SUMMARY_TITLE in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("results: "))
    return lines[start:end]


def wait_for(cluster: Cluster, jobs: list[str], timeout: float) -> None:
    """Until none of ``jobs`` (array jobs included) is pending or running."""
    deadline = time.monotonic() + timeout
    while cluster.run("squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T"):
        assert time.monotonic() < deadline, cluster.run("squeue", "-h", "-o", "%i %T %R")
        time.sleep(5)


def job_states(cluster: Cluster, job: str) -> list[str]:
    """The final states of ``job`` (each array task's), from the controller's memory."""
    shown = cluster.run("scontrol", "-o", "show", "job", job)
    return [
        field.split("=", 1)[1]
        for line in shown.splitlines()
        for field in line.split()
        if field.startswith("JobState=")
    ]


def test_the_slurm_example_merged_equals_one_plain_run(cluster: Cluster, image: str, tmp_path: Path) -> None:
    work, results = tmp_path / "work", tmp_path / "results"
    (work / "logs").mkdir(parents=True)
    array = as_written(REPO / "examples" / "slurm" / "osworld-array.sbatch", work / "osworld-array.sbatch")
    merge = as_written(REPO / "examples" / "slurm" / "merge.sbatch", work / "merge.sbatch")
    env = cluster.env({**engine_env("podman", image), "IMAGE": image, "RESULTS": str(results)})

    array_job = cluster.run("sbatch", "--parsable", str(array), env=env, cwd=work).split(";")[0]
    merge_job = cluster.run("sbatch", "--parsable", f"--dependency=afterok:{array_job}", str(merge),
                            env=env, cwd=work).split(";")[0]  # fmt: skip
    wait_for(cluster, [array_job, merge_job], timeout=1800)
    logs = "\n".join(path.read_text()[-3000:] for path in sorted((work / "logs").glob("*.out")))
    assert job_states(cluster, array_job) == ["COMPLETED", "COMPLETED"], logs
    assert job_states(cluster, merge_job) == ["COMPLETED"], logs
    assert sorted(path.name for path in results.glob("shard-*")) == ["shard-1", "shard-2"]

    # One plain run of the same tasks in the same image.
    plain = tmp_path / "plain"
    plain.mkdir()
    run = subprocess.run(
        ["podman", "run", "--rm", "--security-opt", "unmask=ALL", "--security-opt", "seccomp=unconfined",
         "--shm-size=1g", "-v", f"{plain}:/results", image, "--agent=replay", "-n", "2",
         "-p", "no:cacheprovider", "/opt/pytest-osworld/tasks/os"],
        capture_output=True, text=True, timeout=1800, env=engine_env("podman", image), check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]

    merged = results / "merged"
    assert outcomes(merged) == outcomes(plain)
    assert len(outcomes(plain)) == len(list((REPO / "tasks" / "os").glob("*.json")))
    merged_summary = (merged / "summary.txt").read_text().splitlines()
    assert merged_summary[1:-2] == summary(run.stdout.splitlines())
