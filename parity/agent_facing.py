"""Agent-facing parity (issue #17, level 3): what the model sees and how its answer is read.

    .venv/bin/python -m parity.agent_facing --out FILE.json [--quick]

On the accessibility trees recorded from our desktop (tests/data/a11y_trees, see
parity/agent_record_trees.py) it compares OSWorld's ``mm_agents`` (run in .parity-venv by
parity/oracle_side/agent_oracle.py) with our default ``osworld`` tree format: node
filtering, the linearised table (untrimmed, then trimmed with tiktoken cl100k_base),
Set-of-Marks boxes, tags table and drawn pixels. On hand-picked and fuzzed model answers
(parity/agent_fuzz.py) it compares the three parsers, in both parse modes of our agents
(``--agent-arg parse=ours|osworld``). A disagreement's name is ``<function>`` or
``<function>/<cause>`` (parity/agent_compare.py); it is documented when docs/parity.md
lists that name under ``## Deliberate differences``. In the ``osworld`` mode (rows
``<function> [osworld]``) no difference can be documented: any one fails the level.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from parity import agent_ours
from parity.agent_compare import MODES, Tally, compare_outputs, compare_trees
from parity.agent_fuzz import answers, handpicked
from parity.agent_tree_fuzz import variants
from parity.documented import documented_names

ROOT = Path(__file__).resolve().parent.parent
TREES = ROOT / "tests" / "data" / "a11y_trees"
ORACLE = ROOT / "parity" / "oracle_side" / "agent_oracle.py"
#: OSWorld's results on the recorded trees and hand-picked answers (tests/unit/test_observe_parity.py).
GOLDEN = TREES / "osworld_results.json.gz"
MAX_TOKENS = 10_000
#: Mutated variants per app with --quick (the set the golden file holds); 10 without.
QUICK_VARIANTS = 4
#: The recorded apps whose trees are also mutated (parity/agent_tree_fuzz.py); Calc's
#: 3,000-element tree is left out to keep the level fast.
FUZZED_APPS = ("chromium", "gimp", "impress", "terminal", "thunderbird", "vscode", "writer")
#: Set-of-Marks boxes the ``tag_N`` answers are resolved against (tag_1..tag_15).
MASKS: list[list[int]] = [[10 * i, 20 * i + 3, 31 + i, 17 + 2 * i] for i in range(15)]
TIKTOKEN_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "pytest-osworld/osworld-agents/tiktoken"
)


def load_trees(folder: Path = TREES) -> list[tuple[str, str, bytes]]:
    """``(app, tree XML, screenshot as an RGB PNG)`` for every recorded app, sorted."""
    from PIL import Image

    trees = []
    for path in sorted(folder.glob("*.xml.gz")):
        app = path.name.removesuffix(".xml.gz")
        shot = Image.open(folder / f"{app}.png").convert("RGB")
        png = io.BytesIO()
        shot.save(png, format="PNG")
        trees.append((app, gzip.decompress(path.read_bytes()).decode(), png.getvalue()))
    return trees


def _tiktoken_ready(python: Path) -> bool:
    """Install tiktoken into the oracle venv if missing; True when cl100k_base is on disk."""
    probe = subprocess.run([str(python), "-c", "import tiktoken"], capture_output=True)
    if probe.returncode != 0:
        print("agent_facing: installing tiktoken into the oracle venv", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "tiktoken"], capture_output=True)
    if not any(TIKTOKEN_DIR.glob("*")):
        print("agent_facing: building cl100k_base (scripts/osworld-agents)", flush=True)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "osworld-agents")], capture_output=True)
    return any(TIKTOKEN_DIR.glob("*"))


def run_oracle(python: Path, cases: dict[str, Any]) -> dict[str, Any]:
    """Run OSWorld's functions on ``cases`` in the oracle venv and return its results."""
    with tempfile.TemporaryDirectory() as tmp:
        cases_path, results_path = Path(tmp) / "cases.json", Path(tmp) / "results.json"
        cases_path.write_text(json.dumps(cases))
        env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(TIKTOKEN_DIR)}
        done = subprocess.run(
            [str(python), str(ORACLE), str(cases_path), str(results_path)],
            capture_output=True,
            text=True,
            env=env,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the oracle failed: {done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(results_path.read_text())
        return result


def write_golden(path: Path, oracle: dict[str, Any], answers_kept: int) -> None:
    """Save OSWorld's results (trees, and the hand-picked answers) for the offline unit test."""
    import PIL

    kept = {
        "trees": oracle["trees"],
        "outputs": oracle["outputs"][:answers_kept],
        "max_tokens": MAX_TOKENS,
        "pillow": PIL.__version__,  # the drawn pixels (som_image) depend on Pillow's font
    }
    path.write_bytes(gzip.compress(json.dumps(kept, sort_keys=True, ensure_ascii=False).encode(), mtime=0))
    print(f"agent_facing: OSWorld's results written to {path}", flush=True)


def run(quick: bool, golden: Path | None = None) -> dict[str, Any]:
    """The level's report (see PARITY.md)."""
    from parity.oracle_venv import ensure_oracle_venv

    started = time.monotonic()
    python = ensure_oracle_venv(ROOT)
    tiktoken_ok = _tiktoken_ready(python)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(TIKTOKEN_DIR))
    recorded = load_trees()
    shots = {name: png for name, _xml, png in recorded}
    fuzzed = [
        (variant, xml, shots[name])
        for name, source, _png in recorded
        if name in FUZZED_APPS
        for variant, xml in variants(name, source, QUICK_VARIANTS if quick else 10)
    ]
    trees = recorded + fuzzed
    texts = answers(300 if quick else 3000)
    print(f"agent_facing: {len(trees)} trees, {len(texts)} answers", flush=True)
    cases = {
        "trees": [{"name": n, "xml": x, "png_b64": base64.b64encode(p).decode()} for n, x, p in trees],
        "outputs": texts,
        "max_tokens": MAX_TOKENS,
        "masks": MASKS,
    }
    oracle = run_oracle(python, cases)
    print(f"agent_facing: oracle done ({time.monotonic() - started:.1f} s)", flush=True)
    if golden is not None:
        write_golden(golden, oracle, len(handpicked()))
    tally = Tally()
    for (name, xml, png), theirs in zip(trees, oracle["trees"], strict=True):
        compare_trees(tally, agent_ours.tree_results(name, xml, png, MAX_TOKENS), theirs)
    for mode in MODES:
        compare_outputs(tally, texts, oracle["outputs"], MASKS, mode)
    not_compared = []
    if not (tiktoken_ok and oracle.get("trimmed") and agent_ours.token_counter()):
        not_compared.append({"name": "trim", "why": "tiktoken's cl100k_base is not available offline"})
    not_compared.append(
        {"name": "linearize (paper format)", "why": "our 5-column format is a deliberate alternative"}
    )
    return tally.report(documented_names(ROOT), time.monotonic() - started, not_compared)


def main(argv: list[str] | None = None) -> int:
    """CLI: write the level's JSON report to ``--out``."""
    parser = argparse.ArgumentParser(description="agent-facing parity with OSWorld's mm_agents")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="fewer fuzzed answers")
    parser.add_argument(
        "--write-golden", action="store_true", help=f"also save OSWorld's results to {GOLDEN}"
    )
    args = parser.parse_args(argv)
    if args.write_golden and not args.quick:
        parser.error("--write-golden goes with --quick (the golden file holds the quick set of trees)")
    report = run(args.quick, GOLDEN if args.write_golden else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    for row in report["rows"]:
        print(
            f"{row['name']:<26} cases {row['cases']:>5}  agree {row['agree']:>5}  "
            f"documented {row['documented']:>4}  undocumented {row['undocumented']:>4}  {row['note']}"
        )
    for mode, total in report["parse_modes"].items():
        print(
            f"parse={mode:<8} cases {total['cases']:>5}  agree {total['agree']:>5}  "
            f"differences {total['differences']:>4}"
        )
    print(f"agent_facing: {report['seconds']:.1f} s, report in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
