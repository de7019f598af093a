"""Create ``.parity-venv``: OSWorld's published code (``desktop-env``) as a test oracle.

    .venv/bin/python -m parity.oracle_venv [--root DIR] [--check]

The oracle lives in a virtualenv of its own (made from ``/usr/bin/python3``) so its pins
never touch the plugin's. ``desktop-env`` is installed with ``--no-deps`` (its declared
dependencies pull torch, transformers and cloud SDKs); the light libraries its evaluators
and agents import are installed beside it, and the heavy ones that only a few metrics use
(easyocr, librosa, acoustid, pydrive) are replaced by stub modules that import but raise on
use. The metrics that need a stubbed library are then "not compared" by the parity levels.

Idempotent: a stamp file records the pinned list; a second call with the same list
returns at once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

DESKTOP_ENV = "desktop-env==1.0.2"

#: The light libraries OSWorld's evaluators, controllers and agents import (issue #17).
LIGHT: tuple[str, ...] = (
    "openpyxl",
    "python-docx",
    "python-pptx",
    "lxml",
    "cssselect",
    "rapidfuzz",
    "pandas",
    "numpy<2",
    "pypdf",
    "PyPDF2",
    "pdfplumber",
    "pymupdf",
    "ImageHash",
    "scikit-image",
    "opencv-python-headless",
    "xmltodict",
    "formulas",
    "odfpy",
    "mutagen",
    "fastdtw",
    "tldextract",
    "chardet",
    "beautifulsoup4",
    "pyyaml",
    "pytz",
    "requests",
    "gymnasium~=0.28.1",
    "Pillow",
    "borb",
    "pyacoustid",
    "playwright",
    "pyautogui",
    "requests-toolbelt",
    "psutil",
    "tqdm",
    "fabric",
    "python-dotenv",
)

#: Modules replaced by stubs: importing works, touching any attribute raises ImportError.
STUBBED: tuple[str, ...] = ("easyocr", "librosa", "acoustid", "pydrive")

#: Submodules OSWorld imports from a stubbed package (``from pydrive.auth import ...``).
STUB_SUBMODULES: dict[str, tuple[str, ...]] = {"pydrive": ("auth", "drive")}

STUB_TEXT = '''"""Stub written by pytest-osworld's parity/oracle_venv.py: {name} is not installed.

Any use raises ImportError and records the use in the environment variable
PARITY_STUB_USED, so the parity runner can tell a case that reached the stub even when
OSWorld's code catches the error.
"""

import os


def _used() -> ImportError:
    os.environ["PARITY_STUB_USED"] = "{name}"
    return ImportError("{name} is stubbed in the parity oracle venv")


class _Missing:
    def __getattr__(self, attr: str) -> object:
        raise _used()

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise _used()


def __getattr__(attr: str) -> object:
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _Missing()
'''

STAMP = "parity-stamp.json"


class OracleVenvError(RuntimeError):
    """The oracle virtualenv could not be created or does not import OSWorld's code."""


def venv_dir(root: Path) -> Path:
    """Where the oracle venv lives for the repository at ``root``."""
    return root / ".parity-venv"


def oracle_python(root: Path) -> Path:
    """The oracle venv's interpreter (it may not exist yet)."""
    return venv_dir(root) / "bin" / "python"


def _stamp_text() -> str:
    stubs = STUB_TEXT + json.dumps(STUB_SUBMODULES, sort_keys=True)
    pins: dict[str, object] = {"desktop_env": DESKTOP_ENV, "light": list(LIGHT), "stubbed": list(STUBBED)}
    pins["stub_sha"] = hashlib.sha256(stubs.encode()).hexdigest()[:16]
    return json.dumps(pins, sort_keys=True)


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def _run(cmd: list[str]) -> None:
    print("parity: " + " ".join(cmd[:6]) + (" ..." if len(cmd) > 6 else ""), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise OracleVenvError(f"{cmd[0]} failed ({done.returncode}): {done.stderr[-2000:]}")


def write_stubs(site: Path) -> list[str]:
    """Write a stub package for each name in :data:`STUBBED` not really installed."""
    written = []
    for name in STUBBED:
        package = site / name
        real = (site / f"{name}.py").exists() or (
            package.exists() and not (package / "_parity_stub").exists()
        )
        if real:
            if (package / "_parity_stub").exists():
                shutil.rmtree(package)
            continue
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(STUB_TEXT.format(name=name))
        for sub in STUB_SUBMODULES.get(name, ()):
            (package / f"{sub}.py").write_text(STUB_TEXT.format(name=f"{name}.{sub}"))
        (package / "_parity_stub").write_text("stub\n")
        written.append(name)
    return written


def check_imports(python: Path) -> None:
    """Raise :class:`OracleVenvError` unless OSWorld's metrics and DesktopEnv import."""
    code = "import desktop_env.evaluators.metrics, desktop_env.desktop_env; print('ok')"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    if done.returncode != 0 or "ok" not in done.stdout:
        raise OracleVenvError(f"OSWorld's code does not import in the oracle venv: {done.stderr[-2000:]}")


def ensure_oracle_venv(root: Path) -> Path:
    """Create (or reuse) ``root/.parity-venv`` and return its python; idempotent."""
    venv = venv_dir(root)
    python = oracle_python(root)
    stamp = venv / STAMP
    if python.is_file() and stamp.is_file() and stamp.read_text() == _stamp_text():
        return python
    if not python.is_file():
        _run(["/usr/bin/python3", "-m", "venv", str(venv)])
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, "--no-deps", DESKTOP_ENV])
    _run([*pip, *LIGHT])
    write_stubs(_site_packages(python))
    check_imports(python)
    stamp.write_text(_stamp_text())
    return python


def main(argv: list[str] | None = None) -> int:
    """CLI: create the oracle venv and print its interpreter."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--check", action="store_true", help="only check that it imports")
    args = parser.parse_args(argv)
    try:
        if args.check:
            check_imports(oracle_python(args.root))
            python = oracle_python(args.root)
        else:
            python = ensure_oracle_venv(args.root)
    except OracleVenvError as error:
        print(f"parity: {error}", file=sys.stderr)
        return 1
    print(python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
