#!/usr/bin/env bash
# The Debian packages of pytest-osworld's local desktop, and an SSH server for distributed
# runs: the first part of scripts/install.sh, on its own so that the container image
# (container/Containerfile) caches this slow layer apart from the code. Idempotent.
#
#   scripts/install-apt.sh        # as root, or as a user with sudo
#
# Only Debian 12 has been tried: on any other host it says so in one line and stops before
# installing anything, pointing at the container image, which runs on any host with Podman
# or Docker.
set -euo pipefail
cd "$(dirname "$0")/.."

# ---- HOST ---------------------------------------------------------------------------------
# shellcheck disable=SC1091
OS_ID=$(. /etc/os-release 2>/dev/null && echo "${ID:-unknown}") || OS_ID=unknown
OS_VERSION=$(. /etc/os-release 2>/dev/null && echo "${VERSION_ID:-}") || OS_VERSION=""
OS_NAME=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-$OS_ID}") || OS_NAME="$(uname -s)"
if [ "$OS_ID" != debian ] || [ "$OS_VERSION" != 12 ]; then
    echo "pytest-osworld: this host is ${OS_NAME:-unknown}, and the embedded desktop has been tried on Debian 12 only (other hosts' Chromium may be a snap, which cannot run in its sandbox): run it in the container image instead, built with 'podman build -f container/Containerfile -t pytest-osworld .' (or docker build), see README.md, section 'Any host: the container image'" >&2
    exit 3
fi
# -------------------------------------------------------------------------------------------

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

# ---- APT_PACKAGES ------------------------------------------------------------------------
# The list is shared with the VM boxes (vagrant/provision.sh) so the two never drift.
PACKAGES_FILE=pytest_osworld/providers/local_desktop/packages.txt
packages_of() {  # packages_of AWK_PROGRAM: the packages of the sections it selects
    awk "$1" "$PACKAGES_FILE" | sed -e 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d'
}
mapfile -t APT_PACKAGES < <(packages_of '/^## /{skip=($0 ~ /without recommends/)} !skip')
mapfile -t APT_PACKAGES_BARE < <(packages_of '/^## /{on=($0 ~ /without recommends/)} on')
# -------------------------------------------------------------------------------------------

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y "${APT_PACKAGES[@]}"
$SUDO apt-get install -y --no-install-recommends "${APT_PACKAGES_BARE[@]}"
# The live view (--live, --pause-on-fail, --agent=human): noVNC's files are served to the
# browser from the host (x11vnc, inside the desktops, is in packages.txt).
$SUDO apt-get install -y --no-install-recommends novnc
# The test suite's: strace holds a process's X requests back, which makes the clipboard race
# that local_desktop/bin/xclip closes certain (tests/integration/test_desktop_clipboard.py).
$SUDO apt-get install -y --no-install-recommends strace

# ---- SSH: hosts of a distributed run ------------------------------------------------------
# Every host of a run spread over machines (pytest-xdist over SSH, docs/scaling.md) needs
# an SSH server, and the controller a client; the tests start sshd processes of their own.
# The package's service must not start here (a server on all addresses that nobody asked
# for): a policy-rc.d that refuses service starts is in place during the install only,
# unless the machine already has one.
if ! dpkg-query -W -f='${Status}' openssh-server 2>/dev/null | grep -q "install ok installed"; then
    if [ -e /usr/sbin/policy-rc.d ]; then
        $SUDO apt-get install -y --no-install-recommends openssh-server openssh-client
    else
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod 755 /usr/sbin/policy-rc.d
        $SUDO apt-get install -y --no-install-recommends openssh-server openssh-client \
            || { $SUDO rm -f /usr/sbin/policy-rc.d; exit 1; }
        $SUDO rm -f /usr/sbin/policy-rc.d
    fi
fi
# -------------------------------------------------------------------------------------------

