#!/usr/bin/env bash
# Idempotent install of the Vagrant back-end's host tools on Debian 12 (bookworm):
# Vagrant with the vagrant-libvirt plugin, libvirt's daemons, QEMU (TCG is enough), the
# box builder's tools (debootstrap, extlinux, qemu-img), socat for the guest bridge, and
# python-vagrant in the repository's venv (the "vagrant" extra).
#
#   scripts/install-vagrant.sh          # as root, or as a user with sudo
#
# Recommends are skipped: they pull libguestfs, supermin, a kernel image and exim4
# (about 860 MB installed with them). Nothing is started here; the test or CI script
# starts virtlogd and libvirtd itself, inside a network namespace it creates (see
# docs/vagrant.md).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

APT_PACKAGES=(
    vagrant vagrant-libvirt libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils
    debootstrap extlinux e2fsprogs socat iproute2 dnsmasq-base
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ -x .venv/bin/python ] && ! .venv/bin/python -c 'import vagrant' 2>/dev/null; then
    .venv/bin/pip install 'python-vagrant>=1.0'
fi

vagrant plugin list 2>/dev/null | grep -q vagrant-libvirt \
    || { echo "pytest-osworld: vagrant-libvirt plugin missing after install" >&2; exit 1; }
echo "pytest-osworld: vagrant install OK ($(vagrant --version))"
