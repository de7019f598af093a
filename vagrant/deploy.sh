#!/bin/bash
# Puts this run's pytest_osworld package and guest token into a provisioned VM and
# (re)starts the desktop session. Run as root by the Vagrantfile's "osworld-deploy" shell
# provisioner at every first `vagrant up` of a machine (never on snapshot restores).
#
#   deploy.sh PACKAGE_TARBALL TOKEN_FILE SCREEN(WxH) PORT [SESSION]
#
# SESSION is openbox (the default) or gnome (GNOME Shell as on Ubuntu, which only the full
# box has).
#
# The package travels with each VM instead of being baked into the box, so editing the
# guest server never forces a box rebuild.
set -euo pipefail
PACKAGE="$1" TOKEN="$2" SCREEN="${3:-1920x1080}" PORT="${4:-5000}" SESSION="${5:-openbox}"
case "$SESSION" in
    openbox) ;;
    gnome)
        command -v gnome-shell >/dev/null || {
            echo "deploy.sh: session gnome needs GNOME Shell, which this box does not have (the" \
                "minimal box has only openbox): use build=full, or session=openbox" >&2
            exit 1
        } ;;
    *) echo "deploy.sh: session $SESSION: use openbox or gnome" >&2; exit 2 ;;
esac
if [ ! -f /etc/systemd/system/osworld-session.service ]; then
    echo "deploy.sh: this box is not provisioned (no osworld-session.service); build it with" \
        "vagrant/build_box.sh or set OSWORLD_PROVISION=1 (provider option provision=1)" >&2
    exit 1
fi
rm -rf /opt/osworld/lib.new && mkdir -p /opt/osworld/lib.new
tar -xzf "$PACKAGE" -C /opt/osworld/lib.new
rm -rf /opt/osworld/lib && mv /opt/osworld/lib.new /opt/osworld/lib
chmod -R a+rX /opt/osworld/lib
install -m 640 -o root -g user "$TOKEN" /etc/osworld/token
rm -f "$TOKEN" "$PACKAGE"
printf 'OSWORLD_SCREEN=%s\nOSWORLD_GUEST_PORT=%s\nOSWORLD_SESSION=%s\n' "$SCREEN" "$PORT" "$SESSION" \
    >/etc/osworld/session.env
systemctl enable osworld-session.service >/dev/null 2>&1 || true
systemctl restart osworld-session.service
echo "deploy.sh: osworld-session started ($SESSION, screen $SCREEN, guest port $PORT)"
