#!/bin/bash
# Puts this run's pytest_osworld package and guest token into a provisioned VM and
# (re)starts the desktop session. Run as root by the Vagrantfile's "osworld-deploy" shell
# provisioner at every first `vagrant up` of a machine (never on snapshot restores).
#
#   deploy.sh PACKAGE_TARBALL TOKEN_FILE SCREEN(WxH) PORT
#
# The package travels with each VM instead of being baked into the box, so editing the
# guest server never forces a box rebuild.
set -euo pipefail
PACKAGE="$1" TOKEN="$2" SCREEN="${3:-1920x1080}" PORT="${4:-5000}"
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
printf 'OSWORLD_SCREEN=%s\nOSWORLD_GUEST_PORT=%s\n' "$SCREEN" "$PORT" >/etc/osworld/session.env
systemctl enable osworld-session.service >/dev/null 2>&1 || true
systemctl restart osworld-session.service
echo "deploy.sh: osworld-session started (screen $SCREEN, guest port $PORT)"
