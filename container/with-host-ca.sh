#!/bin/sh
# Runs a build step that downloads over HTTPS (pip, npm) trusting, besides Debian's CAs, the
# extra CAs of the building host, when the build was given them as the secret "host_ca"
# (container/build.sh passes /usr/local/share/ca-certificates/*.crt, where a host behind a
# TLS-inspecting proxy keeps its proxy's CA). The secret is mounted for the step only: the
# image never holds it. Without the secret the command runs as it is.
set -eu
if [ -s /run/secrets/host_ca ]; then
    bundle=$(mktemp)
    cat /etc/ssl/certs/ca-certificates.crt /run/secrets/host_ca >"$bundle"
    export NODE_EXTRA_CA_CERTS=/run/secrets/host_ca PIP_CERT="$bundle" SSL_CERT_FILE="$bundle" \
        REQUESTS_CA_BUNDLE="$bundle" npm_config_cafile="$bundle"
    status=0
    "$@" || status=$?
    rm -f "$bundle"
    exit "$status"
fi
exec "$@"
