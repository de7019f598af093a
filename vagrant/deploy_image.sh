#!/bin/bash
# Our guest server into OSWorld's own VM image (provider option server=ours), as root, at
# the first `vagrant up` of a machine (never on snapshot restores).
#
#   deploy_image.sh PACKAGE_TARBALL TOKEN_FILE PORT
#
# The image keeps its desktop (OSWorld's Xorg session on :0, its apps, its home). What
# changes: OSWorld's own server (osworld_server.service: no token, any command) is stopped
# and disabled, and osworld-guest.service runs our guest server as the same user, in the
# same environment as the unit it replaces (DISPLAY, the session bus, XDG_RUNTIME_DIR), on
# a unix socket relayed from TCP PORT. Every request then needs this VM's token.
set -euo pipefail
PACKAGE="$1" TOKEN="$2" PORT="${3:-5000}"
log() { echo "deploy_image.sh: $*" >&2; }

# The unit being replaced tells us the desktop's user and environment.
RUN_AS=user
ENVIRONMENT="DISPLAY=:0 XDG_RUNTIME_DIR=/run/user/1000 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"
if systemctl cat osworld_server.service >/dev/null 2>&1; then
    RUN_AS=$(systemctl show -p User --value osworld_server.service)
    RUN_AS=${RUN_AS:-user}
    FROM_UNIT=$(systemctl show -p Environment --value osworld_server.service)
    [ -n "$FROM_UNIT" ] && ENVIRONMENT="$FROM_UNIT"
    systemctl disable --now osworld_server.service >/dev/null 2>&1 || true
    log "stopped OSWorld's server (osworld_server.service, user $RUN_AS)"
fi
# Anything else still on the port (a server started another way) must not answer for us.
fuser -k "$PORT/tcp" >/dev/null 2>&1 || true

rm -rf /opt/osworld/lib.new && mkdir -p /opt/osworld/lib.new /etc/osworld
tar -xzf "$PACKAGE" -C /opt/osworld/lib.new
rm -rf /opt/osworld/lib && mv /opt/osworld/lib.new /opt/osworld/lib
chmod -R a+rX /opt/osworld/lib
install -m 640 -o root -g "$(id -gn "$RUN_AS")" "$TOKEN" /etc/osworld/token
rm -f "$TOKEN" "$PACKAGE"

# Our interpreter when the image has one (our boxes), else the image's python3, which
# OSWorld's server already needs with pyautogui, python-xlib and pyatspi.
PYTHON=/usr/bin/python3
[ -x /opt/osworld/venv/bin/python ] && PYTHON=/opt/osworld/venv/bin/python

mkdir -p /usr/local/lib/osworld
cat >/usr/local/lib/osworld/image-guest <<SH
#!/bin/bash
# Our guest server on OSWorld's desktop: TCP $PORT relayed to its unix socket.
set -eu
for auth in "\$XDG_RUNTIME_DIR/gdm/Xauthority" "\$HOME/.Xauthority"; do
    [ -f "\$auth" ] && { export XAUTHORITY="\$auth"; break; }
done
socat "TCP-LISTEN:$PORT,fork,reuseaddr" "UNIX-CONNECT:/run/osworld-guest/guest.sock" &
export PYTHONPATH=/opt/osworld/lib
exec $PYTHON -m pytest_osworld.guest --token-file /etc/osworld/token \\
    --unix-socket /run/osworld-guest/guest.sock
SH
chmod 755 /usr/local/lib/osworld/image-guest

cat >/etc/systemd/system/osworld-guest.service <<UNIT
[Unit]
Description=pytest-osworld guest server on OSWorld's desktop (token required)
After=network.target display-manager.service

[Service]
User=$RUN_AS
WorkingDirectory=~
RuntimeDirectory=osworld-guest
RuntimeDirectoryMode=0700
Environment=$ENVIRONMENT
Environment=HOME=$(getent passwd "$RUN_AS" | cut -d: -f6) PYTHONDONTWRITEBYTECODE=1
ExecStart=/usr/local/lib/osworld/image-guest
Restart=always
RestartSec=1
KillMode=control-group

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable osworld-guest.service >/dev/null 2>&1
systemctl restart osworld-guest.service
log "osworld-guest started (user $RUN_AS, port $PORT, $PYTHON)"
