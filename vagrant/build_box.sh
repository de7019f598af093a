#!/bin/bash
# Builds the OSWorld desktop as a vagrant-libvirt box, offline from Debian packages, on a
# Debian 12 machine with root (no Vagrant Cloud, no image download; only the Debian mirror
# and the pip index the host already uses; OSWORLD_DEBIAN_MIRROR overrides the mirror, see
# scripts/debian-mirrors.sh):
#
#   1. debootstrap --variant=minbase bookworm (kernel, systemd, sshd, sudo, dhcp), cached;
#   2. in a chroot: the Vagrant conventions (user vagrant, insecure key, passwordless
#      sudo, dhcp on eth0) and vagrant/provision.sh, the same provisioning as every box
#      (the desktop packages of local_desktop/packages.txt, user "user", the session
#      service, the home template); the full box also gets this machine's Ubuntu font
#      faces (scripts/install.sh makes them; the gnome session's UI font);
#   3. a whole-disk ext4 image (no partition table: `mkfs.ext4 -d`, no mount needed),
#      made bootable with extlinux; then qcow2, metadata.json, the box Vagrantfile, tar.
#
#   vagrant/build_box.sh [--minimal] [--cache DIR] [--compress] [--force]
#
# --minimal    only the "## core" packages: guest server, Xvfb, openbox, AT-SPI, xterm
# --cache DIR  where stages and boxes are kept (default $XDG_CACHE_HOME/pytest-osworld/vagrant)
# --compress   qcow2 compression (smaller box, ~30 s more; off by default)
# --force      rebuild even when a box for the same inputs exists
#
# The box is cached by content: its name ends in a hash of every input (this script,
# provision.sh, packages.txt, build_template.sh, guest-requirements.txt, the variant), so
# an unchanged tree reuses the box and a changed one builds a new name (vagrant-libvirt
# caches box volumes by name, so a new name is what makes a rebuilt box actually used).
# The last two lines of stdout are BOX_NAME=... and BOX_FILE=...; logs go to stderr.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(dirname "$HERE")"
DESKTOP_DIR="$REPO/pytest_osworld/providers/local_desktop"
VARIANT=full COMPRESS=0 FORCE=0
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/pytest-osworld/vagrant"
while [ $# -gt 0 ]; do
    case "$1" in
        --minimal) VARIANT=minimal ;;
        --cache) CACHE="$2"; shift ;;
        --compress) COMPRESS=1 ;;
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) echo "build_box.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" -eq 0 ] || { echo "build_box.sh: needs root (debootstrap, chroot, loop mount)" >&2; exit 1; }
for tool in debootstrap mkfs.ext4 extlinux qemu-img; do
    command -v "$tool" >/dev/null || { echo "build_box.sh: $tool missing; run scripts/install-vagrant.sh" >&2; exit 1; }
done
log() { echo "build_box: [$(date +%T)] $*" >&2; }
PYTHON="${OSWORLD_BUILD_PYTHON:-$REPO/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3

SUITE=bookworm
# The Debian mirror this host's apt uses (or OSWORLD_DEBIAN_MIRROR's).
MIRROR=$("$REPO/scripts/debian-mirrors.sh" --suite "$SUITE" | sed -n 's/^MIRROR=//p')
[ -n "$MIRROR" ] || exit 1
BASE_INCLUDE=systemd-sysv,udev,linux-image-amd64,openssh-server,sudo,ifupdown,isc-dhcp-client,iproute2,netbase,kmod,procps,less,python3,ca-certificates
BASE_KEY=$(echo "base-v1 $SUITE $MIRROR $BASE_INCLUDE" | sha256sum | cut -c1-12)
# The packages this variant installs (not the whole file: an app added to "## apps" must
# not invalidate the minimal box), read as provision.sh reads them.
if [ "$VARIANT" = minimal ]; then SECTION='/^## core/{on=1;next} /^## /{on=0} on'; else SECTION=1; fi
PACKAGE_LIST=$(awk "$SECTION" "$DESKTOP_DIR/packages.txt" | sed -e 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort)
# The full box carries the gnome session, whose UI font Debian does not package: the faces
# scripts/install.sh made on this machine go in.
FONTS=""
if [ "$VARIANT" = full ]; then
    FONTS=/usr/local/share/fonts/ubuntu
    ls "$FONTS"/*.ttf >/dev/null 2>&1 \
        || { echo "build_box.sh: no Ubuntu font in $FONTS (the full box's gnome session needs it); run scripts/install.sh first" >&2; exit 1; }
fi
KEY=$(cat "$0" "$HERE/provision.sh" "$HERE/guest-requirements.txt" "$DESKTOP_DIR/build_template.sh" \
    ${FONTS:+"$FONTS"/*.ttf} <(echo "$VARIANT $COMPRESS $BASE_KEY $PACKAGE_LIST") | sha256sum | cut -c1-12)
NAME="osworld/debian12-$VARIANT-$KEY"
BOX="$CACHE/boxes/debian12-$VARIANT-$KEY.box"

mkdir -p "$CACHE/boxes" "$CACHE/apt-archives/partial" "$CACHE/debootstrap-debs"
exec 9>"$CACHE/build.lock"
flock 9
if [ "$FORCE" = 0 ] && [ -f "$BOX.done" ] && [ -f "$BOX" ]; then
    log "cached: $BOX"
    echo "BOX_NAME=$NAME"
    echo "BOX_FILE=$BOX"
    exit 0
fi
START=$SECONDS
WORK=$(mktemp -d "$CACHE/build-XXXXXX")
ROOT="$WORK/rootfs"
MNT="$WORK/mnt"
cleanup() {
    for m in "$ROOT/var/cache/apt/archives" "$ROOT/dev/pts" "$ROOT/dev" "$ROOT/sys" "$ROOT/proc" "$MNT"; do
        mountpoint -q "$m" 2>/dev/null && umount -l "$m"
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

# ---- 1. base system (cached by its package list) -------------------------------------------
BASE="$CACHE/base-$BASE_KEY.tar"
if [ ! -f "$BASE.done" ]; then
    log "debootstrap $SUITE (minbase + kernel, sshd, sudo, dhcp)"
    debootstrap --variant=minbase --include="$BASE_INCLUDE" --cache-dir="$CACHE/debootstrap-debs" \
        "$SUITE" "$WORK/base" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -30 "$WORK/debootstrap.log" >&2; exit 1; }
    tar -C "$WORK/base" -cf "$BASE" .
    rm -rf "$WORK/base"
    touch "$BASE.done"
    log "base done ($(du -h "$BASE" | cut -f1))"
fi
mkdir -p "$ROOT" "$MNT"
tar -C "$ROOT" -xf "$BASE"

# ---- 2. Vagrant conventions and the desktop, in a chroot -----------------------------------
mount -t proc proc "$ROOT/proc"
mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
mount -t devpts devpts "$ROOT/dev/pts"
mount --bind "$CACHE/apt-archives" "$ROOT/var/cache/apt/archives"
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod 755 "$ROOT/usr/sbin/policy-rc.d"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
echo "deb $MIRROR $SUITE main" >"$ROOT/etc/apt/sources.list"

echo osworld >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 osworld\n' >"$ROOT/etc/hosts"
echo '/dev/vda / ext4 defaults,errors=remount-ro 0 1' >"$ROOT/etc/fstab"
printf 'auto lo\niface lo inet loopback\nallow-hotplug eth0\niface eth0 inet dhcp\n' \
    >"$ROOT/etc/network/interfaces"
# uid 1001: the desktop user "user" must be uid 1000, like the local desktop's.
chroot "$ROOT" useradd -m -u 1001 -U -s /bin/bash -G sudo vagrant
echo vagrant:vagrant | chroot "$ROOT" chpasswd
echo 'vagrant ALL=(ALL) NOPASSWD: ALL' >"$ROOT/etc/sudoers.d/vagrant" && chmod 440 "$ROOT/etc/sudoers.d/vagrant"
install -d -m 700 -o 1001 -g 1001 "$ROOT/home/vagrant/.ssh"
VAGRANT_KEY=$(ls /usr/share/rubygems-integration/all/gems/vagrant-*/keys/vagrant.pub 2>/dev/null | head -1 || true)
[ -n "$VAGRANT_KEY" ] || { echo "build_box.sh: Vagrant's insecure key not found (install vagrant)" >&2; exit 1; }
install -m 600 -o 1001 -g 1001 "$VAGRANT_KEY" "$ROOT/home/vagrant/.ssh/authorized_keys"
echo 'UseDNS no' >"$ROOT/etc/ssh/sshd_config.d/vagrant.conf"
# Boot messages and the guest's journal on the serial console (the provider's console log).
mkdir -p "$ROOT/etc/systemd/journald.conf.d"
printf '[Journal]\nForwardToConsole=yes\nMaxLevelConsole=info\n' >"$ROOT/etc/systemd/journald.conf.d/console.conf"

log "wheels of the guest's Python packages"
BUILD=/var/tmp/osworld-build
mkdir -p "$ROOT$BUILD/wheels"
"$PYTHON" -m pip wheel -q --no-deps -w "$ROOT$BUILD/wheels" -r "$HERE/guest-requirements.txt" 2>&1 \
    | grep -v "is ignored: it is neither" >&2 || true
cp "$HERE/provision.sh" "$HERE/guest-requirements.txt" "$ROOT$BUILD/"
cp -r "$DESKTOP_DIR" "$ROOT$BUILD/local_desktop"
log "provision.sh ($VARIANT) in the chroot"
PROVISION_ARGS=(--desktop-dir "$BUILD/local_desktop" --requirements "$BUILD/guest-requirements.txt" --wheels "$BUILD/wheels")
[ "$VARIANT" = minimal ] && PROVISION_ARGS+=(--minimal)
if [ -n "$FONTS" ]; then
    mkdir -p "$ROOT$BUILD/fonts" && cp "$FONTS"/*.ttf "$ROOT$BUILD/fonts/"
    PROVISION_ARGS+=(--fonts "$BUILD/fonts")
fi
chroot "$ROOT" /bin/bash "$BUILD/provision.sh" "${PROVISION_ARGS[@]}" >"$WORK/provision.log" 2>&1 \
    || { tail -40 "$WORK/provision.log" >&2; exit 1; }
grep '^provision:' "$WORK/provision.log" >&2 || true

umount "$ROOT/var/cache/apt/archives"
rm -rf "$ROOT$BUILD" "$ROOT/usr/sbin/policy-rc.d" "$ROOT/var/lib/apt/lists/"* "$ROOT/var/cache/apt/"*.bin
rm -f "$ROOT/etc/resolv.conf"
: >"$ROOT/etc/machine-id"
for m in "$ROOT/dev/pts" "$ROOT/dev" "$ROOT/sys" "$ROOT/proc"; do umount "$m"; done

# ---- 3. disk image, bootloader, box --------------------------------------------------------
USED_MB=$(du -sm "$ROOT" | cut -f1)
SIZE_GB=$(( (USED_MB + 1536 + 1023) / 1024 ))
log "ext4 image of ${SIZE_GB}G (rootfs ${USED_MB} MiB)"
KERNEL=$(basename "$(ls "$ROOT"/boot/vmlinuz-* | sort -V | tail -1)")
INITRD=$(basename "$(ls "$ROOT"/boot/initrd.img-* | sort -V | tail -1)")
mkdir -p "$ROOT/boot/extlinux"
cat >"$ROOT/boot/extlinux/extlinux.conf" <<CONF
DEFAULT linux
TIMEOUT 1
LABEL linux
    LINUX /boot/$KERNEL
    INITRD /boot/$INITRD
    APPEND root=/dev/vda rw console=tty0 console=ttyS0,115200 net.ifnames=0 biosdevname=0
CONF
mkfs.ext4 -q -F -L root -O ^64bit,^metadata_csum,^orphan_file,^metadata_csum_seed \
    -d "$ROOT" "$WORK/disk.raw" "${SIZE_GB}G"
rm -rf "$ROOT"
mount -o loop "$WORK/disk.raw" "$MNT"
extlinux --install "$MNT/boot/extlinux" 2>&1 | grep -v "unable to obtain device geometry" >&2 || true
umount "$MNT"

log "qcow2 and box"
mkdir -p "$WORK/box"
QEMU_IMG_ARGS=(convert -O qcow2)
[ "$COMPRESS" = 1 ] && QEMU_IMG_ARGS+=(-c)
qemu-img "${QEMU_IMG_ARGS[@]}" "$WORK/disk.raw" "$WORK/box/box.img"
rm -f "$WORK/disk.raw"
printf '{"provider": "libvirt", "format": "qcow2", "virtual_size": %d}\n' "$SIZE_GB" >"$WORK/box/metadata.json"
cat >"$WORK/box/Vagrantfile" <<'RUBY'
# Box defaults of the pytest-osworld Debian box (whole-disk ext4 on /dev/vda).
Vagrant.configure("2") do |config|
  config.vm.provider :libvirt do |lv|
    lv.disk_bus = "virtio"
  end
end
RUBY
tar -C "$WORK/box" -cf "$BOX.tmp" metadata.json Vagrantfile box.img
mv "$BOX.tmp" "$BOX"
touch "$BOX.done"
# Keep only the newest box of this variant.
for old in "$CACHE"/boxes/debian12-"$VARIANT"-*.box; do
    [ "$old" = "$BOX" ] || rm -f "$old" "$old.done"
done
log "box done in $((SECONDS - START)) s: $BOX ($(du -h "$BOX" | cut -f1))"
echo "BOX_NAME=$NAME"
echo "BOX_FILE=$BOX"
