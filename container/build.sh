#!/usr/bin/env bash
# Builds the pytest-osworld container image from Debian's packages alone (no registry of
# images needed): a Debian 12 root file system made by mmdebstrap, imported as the base
# image, then container/Containerfile on top of it. The last line printed is the image's name.
#
#   ./container/build.sh                 # podman (default) or ENGINE=docker
#   IMAGE=name:tag ./container/build.sh  # another name (default localhost/pytest-osworld:latest)
#   REFRESH_BASE=1 ./container/build.sh  # make the base root file system again (newer packages)
#
# As root on Debian it installs what it needs (podman or docker.io's client, mmdebstrap, runc).
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-podman}
IMAGE=${IMAGE:-localhost/pytest-osworld:latest}
BASE=${BASE:-localhost/pytest-osworld-base:bookworm}
say() { echo "container/build.sh: $*" >&2; }

# ---- tools --------------------------------------------------------------------------------
missing=()
command -v "$ENGINE" >/dev/null || missing+=("$([ "$ENGINE" = docker ] && echo docker.io || echo podman runc)")
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        say "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]} >&2 \
            || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]} >&2; }
    else
        say "needs ${missing[*]} (Debian's packages); or build with a registry: $ENGINE build -f container/Containerfile -t pytest-osworld ."
        exit 1
    fi
fi

# ---- the base image: Debian 12 from Debian's packages --------------------------------------
image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }
if [ -n "${REFRESH_BASE:-}" ] || ! image_exists "$BASE"; then
    # The Debian mirrors this host's apt uses (or OSWORLD_DEBIAN_MIRROR's).
    mirrors=$(./scripts/debian-mirrors.sh --suite bookworm) || exit 1
    mirror=$(sed -n 's/^MIRROR=//p' <<<"$mirrors")
    security=$(sed -n 's/^SECURITY_MIRROR=//p' <<<"$mirrors")
    if [ -z "$security" ]; then
        say "the host's apt sources name no security mirror for bookworm-security; set" \
            "OSWORLD_DEBIAN_MIRROR='MIRROR_URL SECURITY_MIRROR_URL'"
        exit 1
    fi
    say "making the base root file system (mmdebstrap, Debian 12 minbase, from $mirror)"
    started=$SECONDS
    rootfs=$(mktemp --suffix=.tar)
    if ! mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$rootfs" \
        "deb $mirror bookworm main" \
        "deb $mirror bookworm-updates main" \
        "deb $security bookworm-security main" >&2; then
        rm -f "$rootfs"
        say "mmdebstrap could not make the root file system (see above)"
        exit 1
    fi
    "$ENGINE" import --change 'CMD ["/bin/bash"]' "$rootfs" "$BASE" >/dev/null
    rm -f "$rootfs"
    say "base root file system made in $((SECONDS - started)) s"
fi

# ---- the engine's settings on this host ----------------------------------------------------
# Some hosts (ours: cgroups v1 in hybrid mode, a capped RLIMIT_NOFILE) cannot start Podman's
# default runtime with its default ulimits; container/containers.conf fixes both. Used only
# when a plain container does not start.
if [ "$ENGINE" = podman ] && [ -z "${CONTAINERS_CONF:-}" ] && ! podman run --rm "$BASE" true >/dev/null 2>&1; then
    export CONTAINERS_CONF="$PWD/container/containers.conf"
    podman run --rm "$BASE" true >/dev/null \
        || { say "podman cannot start a container here, even with $CONTAINERS_CONF"; exit 1; }
    say "podman needs container/containers.conf on this host (runc, no default ulimits): set CONTAINERS_CONF=$CONTAINERS_CONF for podman run too"
fi

# ---- the image ----------------------------------------------------------------------------
# The host's own CAs (a TLS-inspecting proxy's, for example) for the build's HTTPS downloads,
# as a build secret: container/with-host-ca.sh uses it, the image does not keep it.
secret=()
host_cas=(/usr/local/share/ca-certificates/*.crt)
if [ -e "${host_cas[0]}" ]; then
    ca_bundle=$(mktemp)
    trap 'rm -f "$ca_bundle"' EXIT
    cat "${host_cas[@]}" >"$ca_bundle"
    secret=(--secret "id=host_ca,src=$ca_bundle")
    say "the build trusts this host's extra CAs too (${#host_cas[@]} in /usr/local/share/ca-certificates)"
fi
say "building the image (container/Containerfile: the desktop's packages and the venv; several minutes)"
started=$SECONDS
"$ENGINE" build -f container/Containerfile --build-arg "BASE=$BASE" "${secret[@]}" -t "$IMAGE" . >&2
size=$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE")
say "built in $((SECONDS - started)) s, $((size / 1000000)) MB"
echo "$IMAGE"
