#!/usr/bin/env bash
# Prints the Debian mirror and the security mirror that this host's apt uses, for the image
# and box builds (container/build.sh, vagrant/build_box.sh), as two shell assignments:
#
#   MIRROR=<URL of the archive that serves SUITE>
#   SECURITY_MIRROR=<URL of the archive that serves SUITE-security, or empty>
#
# read from the host's apt sources: deb822 files (sources.list.d/*.sources) and one-line
# lists (sources.list, sources.list.d/*.list); deb-src lines, disabled entries
# (Enabled: no) and non-network URIs (file:, cdrom:) are skipped. A site with its own mirror
# or proxy thus builds from what its apt already uses.
#
# OSWORLD_DEBIAN_MIRROR overrides the host's sources: "URL" (the security mirror is then
# URL-security, Debian's own layout) or "URL SECURITY_URL".
#
#   scripts/debian-mirrors.sh [--apt-dir DIR] [--suite SUITE]    # defaults: /etc/apt, bookworm
#
# Exits 1 with a message naming what to set when no mirror is found.
set -euo pipefail
APT_DIR=/etc/apt
SUITE=bookworm
while [ $# -gt 0 ]; do
    case "$1" in
        --apt-dir) APT_DIR="$2"; shift ;;
        --suite) SUITE="$2"; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "debian-mirrors.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -n "${OSWORLD_DEBIAN_MIRROR:-}" ]; then
    read -r mirror security _ <<<"$OSWORLD_DEBIAN_MIRROR"
    echo "MIRROR=${mirror%/}"
    echo "SECURITY_MIRROR=${security:-${mirror%/}-security}"
    exit 0
fi

# Every (URI, suite) pair of a binary source, one per line, in the order apt reads them.
pairs() {
    local files=()
    [ -f "$APT_DIR/sources.list" ] && files+=("$APT_DIR/sources.list")
    for file in "$APT_DIR"/sources.list.d/*.list; do [ -f "$file" ] && files+=("$file"); done
    if [ ${#files[@]} -gt 0 ]; then
        # One-line format: deb [option=value ...] URI SUITE COMPONENT...
        awk '
            { sub(/#.*/, "") }
            $1 != "deb" { next }
            {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if (i + 1 <= NF) print $i, $(i + 1)
            }' "${files[@]}"
    fi
    for file in "$APT_DIR"/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        # deb822: paragraphs of "Field: value" (continuation lines start with a space).
        awk '
            function flush(   n, m, i, j, uri, suite) {
                if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
                    n = split(uris, uri, " "); m = split(suites, suite, " ")
                    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print uri[i], suite[j]
                }
                types = ""; uris = ""; suites = ""; enabled = ""; field = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/ { if (field == "uris") uris = uris " " $0; else if (field == "suites") suites = suites " " $0; next }
            {
                name = tolower($0); sub(/:.*/, "", name)
                value = $0; sub(/^[^:]*:[ \t]*/, "", value)
                field = name
                if (name == "types") types = value
                else if (name == "uris") uris = value
                else if (name == "suites") suites = value
                else if (name == "enabled") enabled = value
            }
            END { flush() }' "$file"
    done
}

network_uri() { [[ "$1" =~ ^(https?|ftp|tor\+https?):// ]]; }
mirror="" security=""
while read -r uri suite; do
    network_uri "$uri" || continue
    uri="${uri%/}"
    if [ -z "$mirror" ] && [ "$suite" = "$SUITE" ]; then mirror="$uri"; fi
    if [ -z "$security" ] && { [ "$suite" = "$SUITE-security" ] || [ "$suite" = "$SUITE/updates" ]; }; then
        security="$uri"
    fi
done < <(pairs)

if [ -z "$mirror" ]; then
    echo "debian-mirrors.sh: no apt source in $APT_DIR serves Debian's '$SUITE' over the network" \
        "(looked in sources.list, sources.list.d/*.list and *.sources); set OSWORLD_DEBIAN_MIRROR" \
        "to the mirror's URL (and, after a space, the security mirror's)" >&2
    exit 1
fi
echo "MIRROR=$mirror"
echo "SECURITY_MIRROR=$security"
