#!/usr/bin/env bash
# One idempotent install of everything pytest-osworld's local desktop needs, on a fresh
# Debian 12 / Ubuntu 22.04+ machine: apt packages, then a venv at .venv made from the
# system python (so apt's pyatspi imports), then the package with all extras.
#
#   scripts/install.sh            # as root, or as a user with sudo
#
# Re-running it is safe: apt and pip skip what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

# ---- APT_PACKAGES ------------------------------------------------------------------------
# The desktop: X server, window manager, D-Bus and AT-SPI, the guest server's Python deps.
APT_PACKAGES=(
    xvfb xauth x11-utils x11-xserver-utils openbox dbus-x11 at-spi2-core
    python3-pyatspi python3-xlib python3-tk python3-venv python3-pip
    bubblewrap socat xdotool wmctrl scrot ffmpeg procps psmisc
    fonts-dejavu-core fonts-liberation xdg-utils libglib2.0-bin dconf-gsettings-backend
    gsettings-desktop-schemas
    # The apps of OSWorld's tasks. libreoffice-gtk3 is REQUIRED for LibreOffice in AT-SPI.
    libreoffice-calc libreoffice-writer libreoffice-impress libreoffice-gtk3
    chromium thunderbird vlc gimp gnome-terminal xterm
    # OCR for compare_image_text.
    tesseract-ocr
)
# -------------------------------------------------------------------------------------------

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y "${APT_PACKAGES[@]}"

# ---- PIP ----------------------------------------------------------------------------------
# Debian's python (not a pyenv one) with system site-packages, or pyatspi cannot import.
if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
fi
.venv/bin/pip install --upgrade pip
.venv/bin/pip install -e '.[all,dev]'
# PyAutoGUI pulls "python3-xlib" 0.15, which overwrites python-xlib 0.33's files (both
# install the Xlib package). Put 0.33 back; pyautogui works with either.
if .venv/bin/pip show python3-xlib >/dev/null 2>&1; then
    .venv/bin/pip uninstall -y python3-xlib
    .venv/bin/pip install --force-reinstall --no-deps 'python-xlib>=0.33'
fi
# -------------------------------------------------------------------------------------------

# Quick self-check: the modules the guest server imports.
.venv/bin/python - <<'PY'
import importlib
for name in ("pyatspi", "Xlib", "mss", "PIL", "pytest_osworld.guest.server"):
    importlib.import_module(name)
print("pytest-osworld: install OK")
PY
