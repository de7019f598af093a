#!/bin/bash
# Builds a stand-in for OSWorld's VM image (Ubuntu.qcow2) from our offline Debian box, for
# the Vagrant test of image=osworld (the real image cannot be downloaded here). As root.
#
#   build_standin.sh BOX_FILE PACKAGE_TARBALL OUT.qcow2
#
# What the stand-in shares with OSWorld's image: a qcow2 disk with no Vagrant conventions
# used (the provider logs in as user/password); a desktop that starts at boot on :0
# (ours: Xvfb, openbox, AT-SPI, run by osworld-session.service with the package baked in);
# and osworld_server.service, as user "user", answering OSWorld's routes on port 5000
# without a token (standin_server.py, relaying to the desktop's guest server). The
# session's own token-guarded TCP relay moves to port 5001.
set -euo pipefail
BOX="$1" PACKAGE="$2" OUT="$3"
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK=$(mktemp -d /var/tmp/osworld-standin.XXXXXX)
cleanup() {
    mountpoint -q "$WORK/root" && umount "$WORK/root"
    rm -rf "$WORK"
}
trap cleanup EXIT
log() { echo "build_standin.sh: $*" >&2; }

tar -xf "$BOX" -C "$WORK" box.img
qemu-img convert -O raw "$WORK/box.img" "$WORK/disk.raw"
rm "$WORK/box.img"
mkdir "$WORK/root"
mount -o loop "$WORK/disk.raw" "$WORK/root"
R="$WORK/root"
[ -f "$R/etc/systemd/system/osworld-session.service" ] || { log "$BOX is not a provisioned box"; exit 1; }

mkdir -p "$R/opt/osworld/lib" "$R/etc/osworld" "$R/usr/local/lib/osworld"
tar -xzf "$PACKAGE" -C "$R/opt/osworld/lib"
chmod -R a+rX "$R/opt/osworld/lib"
USER_GID=$(awk -F: '$1 == "user" {print $4}' "$R/etc/passwd")
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$R/etc/osworld/token"
chown "0:$USER_GID" "$R/etc/osworld/token" && chmod 640 "$R/etc/osworld/token"
printf 'OSWORLD_SCREEN=1920x1080\nOSWORLD_GUEST_PORT=5001\n' >"$R/etc/osworld/session.env"
install -m 644 "$HERE/standin_server.py" "$R/usr/local/lib/osworld/osworld-standin-server.py"

cat >"$R/etc/systemd/system/osworld_server.service" <<'UNIT'
[Unit]
Description=Stand-in of OSWorld's server (no token, OSWorld's routes only) on port 5000
After=osworld-session.service

[Service]
User=user
Group=user
Environment=DISPLAY=:0 XDG_RUNTIME_DIR=/run/user/1000 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus
Environment=PATH=/opt/osworld/bin:/usr/local/bin:/usr/bin:/bin XDG_SESSION_TYPE=x11 LANG=C.UTF-8
Environment=NO_AT_BRIDGE=0 GTK_MODULES=gail:atk-bridge ACCESSIBILITY_ENABLED=1 SAL_USE_VCLPLUGIN=gtk3
ExecStart=/opt/osworld/venv/bin/python /usr/local/lib/osworld/osworld-standin-server.py --listen 0.0.0.0:5000 --socket /run/osworld/ctl/guest.sock --token-file /etc/osworld/token
Restart=on-failure
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/osworld_server.service "$R/etc/systemd/system/multi-user.target.wants/osworld_server.service"

sync
umount "$R"
sync
# What was written must be in the disk file before it becomes the image. Once (CI,
# 2026-11-28, under load) an image came out as the plain box: none of the above was in
# it, so its desktop never started and every task waited 25 minutes for a guest that
# crashed without X. Read back from the file itself, not through a mount.
for file in /opt/osworld/lib/pytest_osworld/guest/__main__.py /etc/osworld/token \
    /etc/systemd/system/osworld_server.service /usr/local/lib/osworld/osworld-standin-server.py; do
    if ! debugfs -R "stat $file" "$WORK/disk.raw" 2>/dev/null | grep -q '^Inode:'; then
        log "$file is not in the written disk; the stand-in is not made"
        exit 1
    fi
done
qemu-img convert -O qcow2 "$WORK/disk.raw" "$OUT.part"
mv "$OUT.part" "$OUT"
log "stand-in image $OUT ($(du -h "$OUT" | cut -f1))"
