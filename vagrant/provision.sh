#!/bin/bash
# Turns a Debian 12 or Ubuntu 22.04 system into the OSWorld desktop, as root, inside the
# target system: a Vagrant shell provisioner (base boxes such as Ubuntu 22.04) or a chroot
# (vagrant/build_box.sh, the offline Debian box). The same desktop as the local provider:
#
#   - the apt packages of pytest_osworld/providers/local_desktop/packages.txt (the list
#     scripts/install.sh installs on this machine; "## core" only with --minimal);
#   - user "user", password "password", in group sudo (OSWorld's tasks pipe the password
#     to `sudo -S`);
#   - /opt/osworld/venv (Debian's python3 with system site-packages: pyatspi, python-xlib,
#     Pillow, tkinter) plus vagrant/guest-requirements.txt (pyautogui, mss), from wheels
#     (--wheels DIR, offline) or PyPI;
#   - the home of "user" prepared by local_desktop/build_template.sh (the local provider's
#     snapshot template), so apps start without first-run dialogs;
#   - with --fonts DIR, the Ubuntu font faces of DIR (the merged .ttf files scripts/install.sh
#     puts in /usr/local/share/fonts/ubuntu) in the same place: the gnome session's UI font
#     (Debian has no package of it; Ubuntu's base boxes have fonts-ubuntu already);
#   - osworld-session.service: at boot, as "user", the local provider's session.sh (Xvfb
#     1920x1080, D-Bus, AT-SPI on, openbox or GNOME Shell as deploy.sh says, the guest
#     server on a unix socket) and a socat
#     relay of TCP port 5000 (every interface) to that socket. The unit starts once
#     vagrant/deploy.sh has put the package in /opt/osworld/lib and the token in
#     /etc/osworld/token.
#
#   provision.sh --desktop-dir DIR --requirements FILE [--wheels DIR] [--fonts DIR] [--minimal]
#
# DIR is a local_desktop directory (packages.txt, build_template.sh). Idempotent: a rerun
# with the same inputs and variant is a no-op (marker /etc/osworld/provisioned).
set -euo pipefail

DESKTOP_DIR="" REQUIREMENTS="" WHEELS="" FONTS="" VARIANT=full
while [ $# -gt 0 ]; do
    case "$1" in
        --desktop-dir) DESKTOP_DIR="$2"; shift ;;
        --requirements) REQUIREMENTS="$2"; shift ;;
        --wheels) WHEELS="$2"; shift ;;
        --fonts) FONTS="$2"; shift ;;
        --minimal) VARIANT=minimal ;;
        *) echo "provision.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ -f "$DESKTOP_DIR/packages.txt" ] && [ -f "$DESKTOP_DIR/build_template.sh" ] \
    || { echo "provision.sh: --desktop-dir must hold packages.txt and build_template.sh" >&2; exit 2; }
[ -f "$REQUIREMENTS" ] || { echo "provision.sh: --requirements FILE is required" >&2; exit 2; }
if [ -n "$FONTS" ] && ! ls "$FONTS"/*.ttf >/dev/null 2>&1; then
    echo "provision.sh: --fonts $FONTS holds no .ttf file" >&2; exit 2
fi
log() { echo "provision: $*" >&2; }

MARKER=/etc/osworld/provisioned
KEY="$VARIANT $(cat "$0" "$DESKTOP_DIR/packages.txt" "$DESKTOP_DIR/build_template.sh" "$REQUIREMENTS" \
    ${FONTS:+"$FONTS"/*.ttf} | sha256sum | cut -c1-16)"
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$KEY" ]; then
    log "already provisioned ($KEY)"
    exit 0
fi

# ---- apt -----------------------------------------------------------------------------------
# Packages the VM needs beyond the shared list (the host gets these from pip or has them).
VM_PACKAGES=(sudo python3-pil dbus ca-certificates)
if [ "$VARIANT" = minimal ]; then
    SECTION='/^## core/{on=1;next} /^## /{on=0} on'
else
    SECTION='1'
fi
mapfile -t PACKAGES < <(awk "$SECTION" "$DESKTOP_DIR/packages.txt" | sed -e 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d')
export DEBIAN_FRONTEND=noninteractive
ALL=("${PACKAGES[@]}" "${VM_PACKAGES[@]}")
installed=$(dpkg-query -W -f='${Status}\n' "${ALL[@]}" 2>/dev/null | grep -c "install ok installed" || true)
if [ "$installed" -eq ${#ALL[@]} ]; then
    log "packages already installed"
else
    log "installing ${#PACKAGES[@]} packages ($VARIANT)"
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${ALL[@]}"
fi

# ---- the Ubuntu font ----------------------------------------------------------------------
if [ -n "$FONTS" ]; then
    install -d /usr/local/share/fonts/ubuntu
    install -m 644 "$FONTS"/*.ttf /usr/local/share/fonts/ubuntu/
    fc-cache -f /usr/local/share/fonts/ubuntu 2>/dev/null || true
    log "Ubuntu font: $(ls /usr/local/share/fonts/ubuntu | wc -l) faces"
fi

# ---- the desktop user ----------------------------------------------------------------------
if ! id user >/dev/null 2>&1; then
    useradd -m -s /bin/bash -u 1000 user 2>/dev/null || useradd -m -s /bin/bash user
fi
echo "user:password" | chpasswd
usermod -aG sudo user

# ---- the guest's Python --------------------------------------------------------------------
mkdir -p /opt/osworld/lib /opt/osworld/bin /etc/osworld
if [ ! -x /opt/osworld/venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages /opt/osworld/venv
fi
if [ -n "$WHEELS" ]; then
    /opt/osworld/venv/bin/pip install -q --no-index --no-deps --find-links "$WHEELS" -r "$REQUIREMENTS"
else
    /opt/osworld/venv/bin/pip install -q --no-deps -r "$REQUIREMENTS"
fi
SITE=$(/opt/osworld/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo /opt/osworld/lib >"$SITE/osworld.pth"

# Names on the session's PATH, as in the local desktop (local_desktop/bin), except sudo:
# the VM has the real one.
cat >/opt/osworld/bin/python <<'SH'
#!/bin/sh
# The guest's interpreter (pyautogui, pyatspi), for OSWorld's `python -c ...` postconfigs.
exec /opt/osworld/venv/bin/python "$@"
SH
cp /opt/osworld/bin/python /opt/osworld/bin/python3
for name in google-chrome code; do
    printf '#!/bin/sh\nexec /opt/osworld/lib/pytest_osworld/providers/local_desktop/bin/%s "$@"\n' \
        "$name" >"/opt/osworld/bin/$name"
done
chmod 755 /opt/osworld/bin/*

# ---- the session service -------------------------------------------------------------------
mkdir -p /usr/local/lib/osworld
cat >/usr/local/lib/osworld/vm-session <<'SH'
#!/bin/bash
# The VM's desktop session: the local provider's session.sh, plus a TCP relay so the
# host reaches the guest server over the VM's network (the token guards every request).
set -eu
install -m 600 /etc/osworld/token "$OSWORLD_CTL/token"
socat "TCP-LISTEN:${OSWORLD_GUEST_PORT},fork,reuseaddr" "UNIX-CONNECT:$OSWORLD_CTL/guest.sock" &
exec /bin/bash "$OSWORLD_DESKTOP_DIR/session.sh"
SH
chmod 755 /usr/local/lib/osworld/vm-session
cat >/etc/systemd/system/osworld-session.service <<'UNIT'
[Unit]
Description=pytest-osworld desktop session (Xvfb, openbox, AT-SPI) and guest server
After=network.target
ConditionPathExists=/etc/osworld/token
ConditionPathExists=/opt/osworld/lib/pytest_osworld/guest/__main__.py

[Service]
User=user
Group=user
WorkingDirectory=/home/user
RuntimeDirectory=user/1000 osworld/ctl
RuntimeDirectoryMode=0700
Environment=HOME=/home/user USER=user LOGNAME=user SHELL=/bin/bash LANG=C.UTF-8 LC_ALL=C.UTF-8
Environment=PATH=/opt/osworld/bin:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
Environment=DISPLAY=:0 XDG_RUNTIME_DIR=/run/user/1000 XDG_SESSION_TYPE=x11 XDG_CONFIG_HOME=/home/user/.config
Environment=NO_AT_BRIDGE=0 GTK_MODULES=gail:atk-bridge QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1
Environment=ACCESSIBILITY_ENABLED=1 SAL_USE_VCLPLUGIN=gtk3 PYTHONDONTWRITEBYTECODE=1 MOZ_APP_REMOTINGNAME=thunderbird
Environment=OSWORLD_CTL=/run/osworld/ctl OSWORLD_SCREEN=1920x1080 OSWORLD_GUEST_PORT=5000
Environment=OSWORLD_GUEST_PYTHON=/opt/osworld/venv/bin/python
Environment=OSWORLD_DESKTOP_DIR=/opt/osworld/lib/pytest_osworld/providers/local_desktop
EnvironmentFile=-/etc/osworld/session.env
ExecStart=/usr/local/lib/osworld/vm-session
Restart=always
RestartSec=2
KillMode=control-group

[Install]
WantedBy=multi-user.target
UNIT
systemctl enable osworld-session.service >/dev/null 2>&1 \
    || ln -sf /etc/systemd/system/osworld-session.service /etc/systemd/system/multi-user.target.wants/

# ---- the home template ---------------------------------------------------------------------
log "building /home/user with build_template.sh"
mkdir -p /var/tmp/osworld-template && cp "$DESKTOP_DIR/build_template.sh" /var/tmp/osworld-template/
chmod -R a+rX /var/tmp/osworld-template
runuser -u user -- env -i HOME=/home/user USER=user LOGNAME=user LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    PATH=/opt/osworld/bin:/usr/local/bin:/usr/bin:/bin XDG_CONFIG_HOME=/home/user/.config \
    SAL_USE_VCLPLUGIN=gtk3 /bin/bash /var/tmp/osworld-template/build_template.sh
rm -rf /var/tmp/osworld-template

echo "$KEY" >"$MARKER"
log "done ($KEY)"
