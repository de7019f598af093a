"""The report from the command line.

``python -m pytest_osworld.report build RESULTS`` writes (or refreshes) the HTML report of a
results folder; ``python -m pytest_osworld.report compare A B [--out FILE]`` writes the
page comparing two results folders. Both print the path of the page they wrote.
``python -m pytest_osworld.report merge RESULTS... --out DIR`` is ``pytest-osworld merge``
(:mod:`pytest_osworld.report.merge`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_osworld.report import merge
from pytest_osworld.report.compare import COMPARISON_NAME, ComparisonError, write_comparison
from pytest_osworld.report.html import write_report


def parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    top = argparse.ArgumentParser(
        prog="python -m pytest_osworld.report", description=__doc__.split("\n\n")[0]
    )
    commands = top.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="write the HTML report of a results folder")
    build.add_argument("results", type=Path, help="the results folder (--results-dir of the run)")
    build.add_argument("--title", help="the index page's heading")
    compare = commands.add_parser("compare", help="write a page comparing two results folders")
    compare.add_argument("a", type=Path, help="results folder A (the baseline)")
    compare.add_argument("b", type=Path, help="results folder B (compared with A)")
    compare.add_argument(
        "--out",
        type=Path,
        default=Path(COMPARISON_NAME),
        help=f"the HTML file to write (default ./{COMPARISON_NAME})",
    )
    compare.add_argument("--label-a", help="the name shown for A (default: its folder's name)")
    compare.add_argument("--label-b", help="the name shown for B (default: its folder's name)")
    merging = commands.add_parser("merge", help=merge.HELP, description=merge.DESCRIPTION)
    merge.add_arguments(merging)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (2 for a folder that cannot be read, or
    runs that ``merge`` refuses)."""
    args = parser().parse_args(argv)
    if args.command == "merge":
        return merge.run(args)
    if args.command == "build":
        if not args.results.is_dir():
            print(f"error: {args.results} is not a folder", file=sys.stderr)
            return 2
        print(write_report(args.results, title=args.title))
        return 0
    labels = None
    if args.label_a or args.label_b:
        labels = (args.label_a or args.a.resolve().name, args.label_b or args.b.resolve().name)
    try:
        print(write_comparison(args.a, args.b, args.out, labels=labels))
    except ComparisonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover - exercised through `python -m` in the tests
    sys.exit(main())
