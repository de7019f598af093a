#!/bin/bash
# The desktop session, run by bubblewrap as uid 1000 ("user") inside the sandbox.
#
# Lays the home template down, starts Xvfb, the D-Bus session bus, the AT-SPI bus and
# openbox, exposes Chromium's DevTools port and VLC's HTTP port on unix sockets in the
# control directory, then becomes the guest server. Readiness is reported by the
# server's /health, which the provider polls; nothing here sleeps for a fixed time.
#
# Environment (set by the provider): HOME, DISPLAY, XDG_RUNTIME_DIR, OSWORLD_CTL (the
# bind-mounted control dir), OSWORLD_TEMPLATE (the home template, read-only),
# OSWORLD_SCREEN (WxH), OSWORLD_GUEST_PYTHON (interpreter with pytest_osworld),
# OSWORLD_TIMEZONE (the IANA time zone), OSWORLD_SESSION (gnome or openbox; openbox when
# unset; in a Vagrant VM, the session vagrant/deploy.sh was given).
set -u
umask 022
log() { echo "session: $*" >&2; }

if [ -d "${OSWORLD_TEMPLATE:-}" ]; then
    cp -a "$OSWORLD_TEMPLATE/." "$HOME/" || log "template copy failed"
fi
touch "$HOME/.Xauthority"           # python-xlib refuses to connect without it
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# The time zone: $TZ names this symlink; the timedatectl stand-in re-points it.
mkdir -p /run/timezone && ln -sfn "/usr/share/zoneinfo/${OSWORLD_TIMEZONE:-Etc/UTC}" /run/timezone/localtime

# Under QEMU's software emulation (a VM with no KVM: systemd-detect-virt says "qemu") the
# guest's vCPU can stall longer than the X server's autorepeat delay (660 ms) between a typed
# key's press and its release, and the letter comes out twice ("Picctures", seen in CI).
# There the delay is 3 s: no recorded agent holds a key (no keyDown in the trajectories).
autorepeat=()
if [ "$(systemd-detect-virt 2>/dev/null)" = qemu ]; then autorepeat=(-ardelay 3000); fi

# Xvfb writes the display number to fd 3 once it accepts connections.
mkfifo /tmp/.xready
Xvfb "$DISPLAY" -screen 0 "${OSWORLD_SCREEN}x24" -nolisten tcp -nolisten local -ac \
    +extension RANDR "${autorepeat[@]}" -displayfd 3 3>/tmp/.xready &
read -r _ </tmp/.xready
rm -f /tmp/.xready
log "X ready on $DISPLAY"

# The session bus at OSWorld's path; a path socket, never an abstract one (which a shared
# network namespace would expose to the host and the other sandboxes).
DBUS_SESSION_BUS_ADDRESS=$(dbus-daemon --session --fork --nopidfile --print-address \
    --address="unix:path=$XDG_RUNTIME_DIR/bus")
export DBUS_SESSION_BUS_ADDRESS
/usr/libexec/at-spi-bus-launcher --launch-immediately &
gsettings set org.gnome.desktop.interface toolkit-accessibility true 2>/dev/null
# Sound: the first client starts PulseAudio (a null output; the home template's
# pulse/default.pa sets its starting volume). Debian's client.conf.d links this file,
# which its init script writes on systems without a systemd user session.
echo "autospawn = yes" >/run/pulseaudio-enable-autospawn
# The window manager is supervised: should it exit (openbox has been seen to die at start
# on a loaded machine), it is started again, so /health's "wm" check does not hang forever.
if [ "${OSWORLD_SESSION:-openbox}" = gnome ]; then
    # GNOME Shell as on Ubuntu 22.04 (OSWorld's image): a system bus (the sandbox's own,
    # with no services, in its private /run; a VM has the real one), its settings, the
    # "ubuntu" mode (Yaru, the dock) from our data dir, and no "screen lock disabled"
    # warning (it is shown once per home).
    if [ ! -S /run/dbus/system_bus_socket ]; then
        mkdir -p /run/dbus
        dbus-daemon --config-file="$OSWORLD_DESKTOP_DIR/gnome/system-bus.conf" --fork --nopidfile
    fi
    dconf load / <"$OSWORLD_DESKTOP_DIR/gnome/settings.ini"
    mkdir -p "$HOME/.local/share/gnome-shell" && touch "$HOME/.local/share/gnome-shell/lock-warning-shown"
    export XDG_CURRENT_DESKTOP=ubuntu:GNOME XDG_SESSION_TYPE=x11
    export XDG_DATA_DIRS="$OSWORLD_DESKTOP_DIR/gnome/share:/usr/local/share:/usr/share"
    (
        while :; do
            gnome-shell --x11 --replace --mode=ubuntu
            log "gnome-shell exited with status $?; restarting it"
            sleep 0.2
        done
    ) &
    # Two of GNOME's settings daemons, each supervised:
    # - media-keys: Ubuntu's keyboard shortcuts that are not the shell's own (Ctrl+Alt+T
    #   opens a terminal, the volume keys); it asks the shell to grab them;
    # - xsettings: hands GNOME's theme, font and text scaling settings to GTK apps over
    #   X11 (Yaru and the Ubuntu font, as on Ubuntu); /health waits for it.
    for daemon in gsd-media-keys gsd-xsettings; do
        (
            while :; do
                "/usr/libexec/$daemon"
                log "$daemon exited with status $?; restarting it"
                sleep 1
            done
        ) &
    done
else
    (
        while :; do
            openbox --config-file "$OSWORLD_DESKTOP_DIR/openbox-rc.xml"
            log "openbox exited with status $?; restarting it"
            sleep 0.2
        done
    ) &
fi

# Ports the host may need, served on unix sockets so they work without a shared network.
socat "UNIX-LISTEN:$OSWORLD_CTL/cdp.sock,fork,mode=600" TCP:127.0.0.1:9222 &
socat "UNIX-LISTEN:$OSWORLD_CTL/vlc.sock,fork,mode=600" TCP:127.0.0.1:8080 &

exec "$OSWORLD_GUEST_PYTHON" -m pytest_osworld.guest \
    --token-file "$OSWORLD_CTL/token" --unix-socket "$OSWORLD_CTL/guest.sock"
