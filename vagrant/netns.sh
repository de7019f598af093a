#!/bin/bash
# A private network namespace with libvirt running inside it, for machines (like our CI
# machines) where private address ranges may only be used inside namespaces we create.
# libvirtd, vagrant and every VM then live in the namespace; the host reaches a VM's guest
# server only through a unix socket relayed from inside (the vagrant provider's `netns`
# option does that). Needs root; no systemd needed.
#
#   vagrant/netns.sh up NAME STATE_DIR [POOL_DIR]   create NAME, start virtlogd + libvirtd
#                                                   in it, define storage pool "osworld"
#   vagrant/netns.sh down NAME STATE_DIR            remove the osworld-* domains, the
#                                                   networks and pool made since "up",
#                                                   stop the daemons, delete NAME
#
# STATE_DIR keeps the daemons' pids and what existed before "up", so "down" removes only
# what this namespace made. POOL_DIR (default /var/lib/libvirt/images/pytest-osworld) keeps
# the box volumes across runs; it must be traversable by libvirt-qemu.
set -euo pipefail
ACTION="${1:-}" NS="${2:-}" STATE="${3:-}"
POOL_DIR="${4:-/var/lib/libvirt/images/pytest-osworld}"
POOL=osworld
URI=qemu:///system
[ -n "$ACTION" ] && [ -n "$NS" ] && [ -n "$STATE" ] || { sed -n '2,17p' "$0" >&2; exit 2; }
[[ "$NS" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "netns.sh: bad namespace name $NS" >&2; exit 2; }
log() { echo "netns.sh: $*" >&2; }
in_ns() { ip netns exec "$NS" "$@"; }

wait_libvirt() {
    local deadline=$((SECONDS + 60))
    until virsh -c "$URI" version >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || { log "libvirtd did not answer in 60 s"; return 1; }
        sleep 0.2
    done
}

stop_pid() {  # stop_pid FILE: TERM the process, then KILL after 10 s
    local pid
    [ -f "$1" ] || return 0
    pid=$(cat "$1")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$1"
}

case "$ACTION" in
up)
    mkdir -p "$STATE" "$POOL_DIR"
    chmod 755 "$POOL_DIR"
    if pgrep -x libvirtd >/dev/null; then
        log "a libvirtd is already running; its sockets in /run/libvirt would be shared. Stop it first."
        exit 1
    fi
    ip netns list | grep -qx "$NS\( .*\)\?" && { log "namespace $NS exists"; exit 1; }
    ip netns add "$NS"
    in_ns ip link set lo up
    # virtlogd writes the VMs' console logs; libvirtd starts it on demand too, but a
    # daemon of our own is one we can stop.
    if ! pgrep -x virtlogd >/dev/null; then
        in_ns virtlogd -d -p "$STATE/virtlogd.pid"
    fi
    in_ns libvirtd -d -p "$STATE/libvirtd.pid"
    wait_libvirt
    virsh -c "$URI" net-list --all --name | sed '/^$/d' >"$STATE/networks-before"
    virsh -c "$URI" pool-list --all --name | sed '/^$/d' >"$STATE/pools-before"
    if ! virsh -c "$URI" pool-info "$POOL" >/dev/null 2>&1; then
        virsh -c "$URI" pool-define-as "$POOL" dir --target "$POOL_DIR" >/dev/null
    fi
    virsh -c "$URI" pool-start "$POOL" >/dev/null 2>&1 || true
    log "namespace $NS up: libvirtd pid $(cat "$STATE/libvirtd.pid"), pool $POOL at $POOL_DIR"
    ;;
down)
    if [ -f "$STATE/libvirtd.pid" ] && kill -0 "$(cat "$STATE/libvirtd.pid")" 2>/dev/null; then
        for dom in $(virsh -c "$URI" list --all --name | grep '^osworld-' || true); do
            log "removing domain $dom"
            virsh -c "$URI" destroy "$dom" >/dev/null 2>&1 || true
            virsh -c "$URI" undefine "$dom" --snapshots-metadata --remove-all-storage >/dev/null 2>&1 \
                || virsh -c "$URI" undefine "$dom" --snapshots-metadata >/dev/null 2>&1 || true
        done
        for net in $(virsh -c "$URI" net-list --all --name | sed '/^$/d'); do
            grep -qx "$net" "$STATE/networks-before" 2>/dev/null && continue
            log "removing network $net"
            virsh -c "$URI" net-destroy "$net" >/dev/null 2>&1 || true
            virsh -c "$URI" net-undefine "$net" >/dev/null 2>&1 || true
        done
        if ! grep -qx "$POOL" "$STATE/pools-before" 2>/dev/null; then
            # The pool's files (box volumes) stay on disk for the next run.
            virsh -c "$URI" pool-destroy "$POOL" >/dev/null 2>&1 || true
            virsh -c "$URI" pool-undefine "$POOL" >/dev/null 2>&1 || true
        fi
    fi
    stop_pid "$STATE/libvirtd.pid"
    stop_pid "$STATE/virtlogd.pid"
    # Anything left in the namespace (dnsmasq of a network, a stray relay) goes with it.
    if ip netns list | grep -q "^$NS\b"; then
        for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$NS"
    fi
    rm -f "$STATE/networks-before" "$STATE/pools-before"
    log "namespace $NS down"
    ;;
*)
    sed -n '2,17p' "$0" >&2
    exit 2
    ;;
esac
