"""The CI and cluster examples under examples/ are valid for the systems they target.

All offline: the GitHub workflow against check-jsonschema's vendored ``vendor.github-workflows``
schema, the Kubernetes manifests against the OpenAPI schemas that kubernetes-validate ships
(Kubernetes pinned to :data:`KUBERNETES_VERSION`), the Slurm scripts with ``bash -n`` and a
list of sbatch's long options. Each example's shard count N is the same everywhere in it.
Every check also rejects a deliberately broken copy, so none of them passes vacuously.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
WORKFLOW = EXAMPLES / "github-actions" / "osworld-matrix.yml"
KUBERNETES = EXAMPLES / "kubernetes"
SHARDS_JOB = KUBERNETES / "shards-job.yaml"
SLURM = EXAMPLES / "slurm"
SLURM_ARRAY = SLURM / "osworld-array.sbatch"
SLURM_MERGE = SLURM / "merge.sbatch"

# The manifests use Job fields of batch/v1 up to 1.33 (backoffLimitPerIndex is GA there) and
# the pod's hostUsers/procMount/appArmorProfile; kubernetes-validate ships its schemas.
KUBERNETES_VERSION = "1.33"

# sbatch's long options, from the OPTIONS section of sbatch(1) of Slurm 22.05.8 (Debian 12's
# slurm-client 22.05.8-4+deb12u3, /usr/share/man/man1/sbatch.1.gz; online as
# https://slurm.schedmd.com/archive/slurm-22.05.8/sbatch.html). Options added by later Slurm
# releases are missing on purpose: the examples must run on older clusters too.
# fmt: off
SBATCH_LONG_OPTIONS = frozenset([
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster-constraint",
    "clusters", "comment", "constraint", "container", "contiguous", "core-spec", "cores-per-socket",
    "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution",
    "error", "exclude", "exclusive", "export", "export-file", "extra-node-info", "get-user-env", "gid",
    "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres",
    "gres-flags", "help", "hint", "hold", "ignore-pbs", "input", "job-name", "kill-on-invalid-dep",
    "licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu",
    "mincpus", "network", "nice", "no-kill", "no-requeue", "nodefile", "nodelist", "nodes", "ntasks",
    "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket", "open-mode", "output",
    "overcommit", "oversubscribe", "parsable", "partition", "power", "prefer", "priority", "profile",
    "propagate", "qos", "quiet", "reboot", "requeue", "reservation", "signal", "sockets-per-node",
    "spread-job", "switches", "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp",
    "uid", "usage", "use-min-nodes", "verbose", "version", "wait", "wait-all-nodes", "wckey", "wrap",
])
# fmt: on

# A proxy that refuses every connection: a validator that tried to download a schema fails.
NO_NETWORK_ENV = {
    key: "http://127.0.0.1:9"
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process validators may open no connection."""

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"validator tried to connect to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def broken_copy(source: Path, tmp_path: Path, old: str, new: str) -> Path:
    """A copy of ``source`` with ``old`` (which must occur) replaced by ``new``."""
    text = source.read_text()
    assert old in text, f"{old!r} not in {source}"
    copy = tmp_path / source.name
    copy.write_text(text.replace(old, new))
    return copy


# --- GitHub Actions ----------------------------------------------------------------------


def check_workflow(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with its built-in GitHub workflow schema, with no network."""
    env = {**os.environ, **NO_NETWORK_ENV, "NO_PROXY": "", "no_proxy": "", "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def load_yaml(path: Path) -> Any:
    """One YAML document (``on:`` stays the string key it is to GitHub)."""
    with path.open() as stream:
        return yaml.load(stream, Loader=yaml.BaseLoader)


def strings(node: Any) -> Iterator[str]:
    """Every string value in a parsed YAML document."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def workflow_problems(workflow: dict[str, Any]) -> list[str]:
    """What makes the matrix workflow's shards disagree, leak a secret or miss the merge."""
    problems = []
    shards_job = workflow["jobs"]["shards"]
    matrix = shards_job["strategy"]["matrix"]["shard"]
    count = len(matrix)
    if matrix != [str(k) for k in range(1, count + 1)]:
        problems.append(f"matrix.shard is {matrix}, not 1..{count}")
    text = "\n".join(strings(workflow))
    used = set(re.findall(r"\$\{\{\s*matrix\.shard\s*\}\}/(\d+)", text))
    if used != {str(count)}:
        problems.append(f"the shard argument and name say N in {sorted(used)}, the matrix {count}")
    if not re.search(r"--shard \$\{\{\s*matrix\.shard\s*\}\}/\d+", text):
        problems.append("no step passes --shard ${{ matrix.shard }}/N")
    merge = workflow["jobs"].get("merge", {})
    if merge.get("needs") not in ("shards", ["shards"]):
        problems.append("the merge job does not need the shards job")
    runs = [step.get("run", "") for step in merge.get("steps", [])]
    if not any(re.search(r"pytest-osworld\b.*\smerge\s.*--out\s", run, re.DOTALL) for run in runs):
        problems.append("the merge job runs no pytest-osworld merge")
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            if "secrets." in step.get("run", ""):
                problems.append(f"job {job_name}: a run script expands a secret: {step.get('name')}")
    return problems


def test_workflow_matches_github_schema(tmp_path: Path) -> None:
    result = check_workflow(WORKFLOW, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok -- validation done" in result.stdout


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(
            "    runs-on: ubuntu-24.04\n    timeout", "    runs_on: ubuntu-24.04\n    timeout", id="key"
        ),
        pytest.param("contents: read", "contents: maybe", id="enum"),
    ],
)
def test_workflow_schema_rejects_broken_copy(tmp_path: Path, old: str, new: str) -> None:
    result = check_workflow(broken_copy(WORKFLOW, tmp_path, old, new), tmp_path / "cache")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Schema validation errors" in result.stdout + result.stderr


def test_workflow_shards_agree() -> None:
    assert workflow_problems(load_yaml(WORKFLOW)) == []


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        pytest.param("shard: [1, 2, 3, 4]", "shard: [1, 2, 3, 4, 5]", "the matrix 5", id="matrix"),
        pytest.param("--shard ${{ matrix.shard }}/4", "--shard ${{ matrix.shard }}/3", "N in", id="arg"),
        pytest.param("shard: [1, 2, 3, 4]", "shard: [0, 1, 2, 3]", "not 1..4", id="0-based"),
        pytest.param("    needs: shards\n", "", "does not need", id="needs"),
        pytest.param('merge "${runs[@]}"', "--version", "runs no pytest-osworld merge", id="merge"),
        pytest.param(
            "docker run --rm $SANDBOX_FLAGS",
            'echo "${{ secrets.OPENAI_API_KEY }}"; docker run --rm $SANDBOX_FLAGS',
            "expands a secret",
            id="secret",
        ),
    ],
)
def test_workflow_shard_check_rejects_broken_copy(tmp_path: Path, old: str, new: str, problem: str) -> None:
    problems = workflow_problems(load_yaml(broken_copy(WORKFLOW, tmp_path, old, new)))
    assert any(problem in p for p in problems), problems


# --- Kubernetes --------------------------------------------------------------------------


def manifests(path: Path) -> list[dict[str, Any]]:
    with path.open() as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


def validate_manifests(path: Path) -> list[str]:
    """Each document against its kind's strict schema; raises on an invalid or unknown one."""
    versions = []
    for doc in manifests(path):
        versions.append(kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True))
    return versions


def kubernetes_shard_problems(docs: list[dict[str, Any]]) -> list[str]:
    """What makes the Indexed Job's N disagree with its --shard argument."""
    (job,) = [doc for doc in docs if doc["kind"] == "Job"]
    spec = job["spec"]
    problems = []
    if spec.get("completionMode") != "Indexed":
        problems.append("completionMode is not Indexed")
    count = spec["completions"]
    if not 1 <= spec.get("parallelism", 1) <= count:
        problems.append(f"parallelism {spec.get('parallelism')} is not in 1..completions ({count})")
    (container,) = spec["template"]["spec"]["containers"]
    script = "\n".join([*container.get("command", []), *container.get("args", [])])
    used = set(re.findall(r"--shard\s+\"?[^\"\s]*/(\d+)", script))
    if used != {str(count)}:
        problems.append(f"--shard says N in {sorted(used)}, completions {count}")
    # JOB_COMPLETION_INDEX is 0..N-1, --shard's K is 1..N.
    if not re.search(r"\$\(\(\s*JOB_COMPLETION_INDEX\s*\+\s*1\s*\)\)", script):
        problems.append("K is not JOB_COMPLETION_INDEX + 1")
    return problems


@pytest.mark.parametrize("path", sorted(KUBERNETES.glob("*.yaml")), ids=lambda p: p.name)
def test_kubernetes_manifest_matches_openapi_schema(path: Path, no_network: None) -> None:
    versions = validate_manifests(path)
    assert versions, f"{path} has no document"
    assert set(versions) == {KUBERNETES_VERSION}


def test_kubernetes_manifests_are_all_checked() -> None:
    names = {path.name for path in KUBERNETES.glob("*.yaml")}
    assert {"namespace.yaml", "pvc.yaml", "shards-job.yaml", "merge-job.yaml"} <= names
    assert not list(KUBERNETES.glob("*.yml")), "use .yaml: the schema test globs *.yaml"
    (pvc,) = manifests(KUBERNETES / "pvc.yaml")
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        pytest.param(
            "completionMode: Indexed", "completionMod: Indexed", kubernetes_validate.ValidationError, id="key"
        ),
        pytest.param("completions: 4", 'completions: "four"', kubernetes_validate.ValidationError, id="type"),
        pytest.param(
            "type: Unconfined # unshare",
            "type: Unconfined\n              level: x #",
            kubernetes_validate.ValidationError,
            id="nested",
        ),
        pytest.param("kind: Job", "kind: Jobb", kubernetes_validate.SchemaNotFoundError, id="kind"),
    ],
)
def test_kubernetes_schema_rejects_broken_copy(
    tmp_path: Path, no_network: None, old: str, new: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        validate_manifests(broken_copy(SHARDS_JOB, tmp_path, old, new))


def test_kubernetes_shards_agree() -> None:
    assert kubernetes_shard_problems(manifests(SHARDS_JOB)) == []


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        pytest.param("completions: 4", "completions: 3", "completions 3", id="completions"),
        pytest.param("parallelism: 4", "parallelism: 5", "parallelism 5", id="parallelism"),
        pytest.param('--shard "$shard/4"', '--shard "$shard/5"', "N in ['5']", id="arg"),
        pytest.param(
            "JOB_COMPLETION_INDEX + 1",
            "JOB_COMPLETION_INDEX + 0",
            "not JOB_COMPLETION_INDEX + 1",
            id="0-based",
        ),
        pytest.param("completionMode: Indexed", "completionMode: NonIndexed", "not Indexed", id="mode"),
    ],
)
def test_kubernetes_shard_check_rejects_broken_copy(tmp_path: Path, old: str, new: str, problem: str) -> None:
    problems = kubernetes_shard_problems(manifests(broken_copy(SHARDS_JOB, tmp_path, old, new)))
    assert any(problem in p for p in problems), problems


# --- Slurm -------------------------------------------------------------------------------


def bash_syntax(path: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run([bash, "-n", str(path)], capture_output=True, text=True, timeout=30, check=False)


def sbatch_directives(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The ``#SBATCH`` options sbatch reads, as (long option, value), and the problems.

    sbatch reads directives only until the first line that is neither blank nor a comment
    (sbatch(1), DESCRIPTION), so a directive after it is a problem: it would be ignored.
    """
    directives: list[tuple[str, str]] = []
    problems = []
    in_header = True
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_header and stripped and not stripped.startswith("#"):
            in_header = False
        if not stripped.startswith("#SBATCH"):
            continue
        if not in_header:
            problems.append(f"line {number}: #SBATCH after the first command is ignored")
            continue
        match = re.fullmatch(r"#SBATCH\s+--([a-z0-9-]+)(?:[=\s]\s*(\S.*))?", stripped)
        if match is None:
            problems.append(f"line {number}: not a long option: {stripped!r}")
            continue
        option, value = match.group(1), (match.group(2) or "").strip()
        if option not in SBATCH_LONG_OPTIONS:
            problems.append(f"line {number}: unknown sbatch option --{option}")
        directives.append((option, value))
    return directives, problems


def slurm_problems(text: str, *, array: bool) -> list[str]:
    """Unknown directives, and an array range that is not 1..N of ``--shard K/N``."""
    directives, problems = sbatch_directives(text)
    arrays = [value for option, value in directives if option == "array"]
    if not array:
        if arrays:
            problems.append("a merge job is no array")
        return problems
    if len(arrays) != 1:
        return [*problems, f"{len(arrays)} --array directives"]
    match = re.fullmatch(r"(\d+)-(\d+)(?:%\d+)?", arrays[0])
    if match is None:
        return [*problems, f"--array={arrays[0]} is not a range 1-N"]
    first, last = int(match.group(1)), int(match.group(2))
    if first != 1:
        problems.append(f"--array starts at {first}: --shard's K is 1-based")
    used = set(re.findall(r"--shard\s+\"?\$\{?SLURM_ARRAY_TASK_ID\}?/(\d+)", text))
    if used != {str(last)}:
        problems.append(f"--shard says N in {sorted(used)}, --array={arrays[0]}")
    return problems


@pytest.mark.parametrize("path", [SLURM_ARRAY, SLURM_MERGE], ids=lambda p: p.name)
def test_slurm_script_is_valid_bash(path: Path) -> None:
    result = bash_syntax(path)
    assert result.returncode == 0, result.stderr


def test_bash_syntax_rejects_broken_copy(tmp_path: Path) -> None:
    result = bash_syntax(broken_copy(SLURM_ARRAY, tmp_path, "    exit 0\nfi", "    exit 0\n"))
    assert result.returncode != 0
    assert "syntax error" in result.stderr


@pytest.mark.parametrize(
    ("path", "array"), [(SLURM_ARRAY, True), (SLURM_MERGE, False)], ids=["array", "merge"]
)
def test_slurm_directives_and_shards(path: Path, array: bool) -> None:
    directives, _ = sbatch_directives(path.read_text())
    assert directives, f"{path} has no #SBATCH directive"
    assert slurm_problems(path.read_text(), array=array) == []


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        pytest.param(
            "#SBATCH --cpus-per-task=4",
            "#SBATCH --cpus-per-tsk=4",
            "unknown sbatch option --cpus-per-tsk",
            id="unknown",
        ),
        pytest.param("#SBATCH --cpus-per-task=4", "#SBATCH -c 4", "not a long option", id="short"),
        pytest.param("#SBATCH --array=1-4", "#SBATCH --array=1-3", "--array=1-3", id="range"),
        pytest.param("#SBATCH --array=1-4", "#SBATCH --array=0-3", "1-based", id="0-based"),
        pytest.param("#SBATCH --array=1-4", "#SBATCH --array=1-4%2", None, id="throttle-ok"),
        pytest.param(
            '--shard "${SLURM_ARRAY_TASK_ID}/4"', '--shard "${SLURM_ARRAY_TASK_ID}/8"', "N in ['8']", id="arg"
        ),
        pytest.param(
            "set -uo pipefail\n",
            "set -uo pipefail\n#SBATCH --exclusive\n",
            "after the first command",
            id="late",
        ),
    ],
)
def test_slurm_check_rejects_broken_copy(tmp_path: Path, old: str, new: str, problem: str | None) -> None:
    problems = slurm_problems(broken_copy(SLURM_ARRAY, tmp_path, old, new).read_text(), array=True)
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_slurm_merge_check_rejects_an_array(tmp_path: Path) -> None:
    text = broken_copy(SLURM_MERGE, tmp_path, "#SBATCH --nodes=1", "#SBATCH --array=1-4").read_text()
    assert "a merge job is no array" in slurm_problems(text, array=False)
