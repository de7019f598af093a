#!/bin/bash
# Builds the home-directory template of the local desktop (the "snapshot").
#
# Run by the provider inside the same sandbox as a session (uid 1000, HOME=/home/user),
# with HOME bind-mounted onto the template's staging directory, once per template key.
# It leaves first-run state done and first-run dialogs off, so every restored desktop
# starts like OSWorld's prepared VM: apps open straight onto their documents.
set -eu
umask 022
log() { echo "template: $*" >&2; }
cd "$HOME"
mkdir -p Desktop Documents Downloads Music Pictures Videos Templates Public \
    .config .local/share .cache
touch .Xauthority

# --- LibreOffice: no tip of the day, no "keep current format" question, MS formats by
# default (OSWorld's postconfigs press Ctrl+S and expect .xlsx/.docx/.pptx kept), no
# update check, no first-start wizard. The profile is created by one headless start.
LO_USER="$HOME/.config/libreoffice/4/user"
# "You are running version X for the first time" infobar: record this version as seen.
LO_VERSION=$(soffice --version 2>/dev/null | sed -n 's/^LibreOffice \([0-9]*\.[0-9]*\).*/\1/p')
mkdir -p "$LO_USER"
item() { printf '<item oor:path="%s"><prop oor:name="%s" oor:op="fuse"><value>%s</value></prop></item>\n' "$1" "$2" "$3"; }
factory() { item "/org.openoffice.Setup/Office/Factories/org.openoffice.Setup:Factory['$1']" ooSetupFactoryDefaultFilter "$2"; }
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    item /org.openoffice.Office.Common/Misc ShowTipOfTheDay false
    item /org.openoffice.Office.Common/Misc FirstRun false
    item /org.openoffice.Office.Common/Save/Document WarnAlienFormat false
    item /org.openoffice.Office.Common/Save/Document LoadReadonly false
    item /org.openoffice.Setup/Office ooSetupInstCompleted true
    item "/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments" AutoCheckEnabled false
    item /org.openoffice.Office.Common/Misc ShowDonation false
    [ -n "$LO_VERSION" ] && item /org.openoffice.Setup/Product ooSetupLastVersion "$LO_VERSION"
    item /org.openoffice.Office.Recovery/AutoSave Enabled false
    item /org.openoffice.Office.Recovery/RecoveryInfo Enabled false
    factory com.sun.star.sheet.SpreadsheetDocument "Calc MS Excel 2007 XML"
    factory com.sun.star.text.TextDocument "MS Word 2007 XML"
    factory com.sun.star.presentation.PresentationDocument "Impress MS PowerPoint 2007 XML"
    echo '</oor:items>'
} >"$LO_USER/registrymodifications.xcu"
if command -v soffice >/dev/null; then
    soffice --headless --norestore --nologo --terminate_after_init >/dev/null 2>&1 || log "soffice init failed"
fi

# --- Chromium as google-chrome: first run done, no welcome page or sign-in promo.
CHROME="$HOME/.config/google-chrome"
mkdir -p "$CHROME/Default"
touch "$CHROME/First Run"
cat >"$CHROME/Default/Preferences" <<'JSON'
{"browser": {"has_seen_welcome_page": true, "check_default_browser": false},
 "distribution": {"skip_first_run_ui": true, "suppress_first_run_default_browser_prompt": true},
 "signin": {"allowed": false}, "sync_promo": {"show_on_first_run_allowed": false},
 "translate": {"enabled": false}, "credentials_enable_service": false,
 "profile": {"password_manager_enabled": false, "exit_type": "Normal", "exited_cleanly": true}}
JSON
# One headless start creates the profile's databases (History, Cookies, Web Data), which
# OSWorld's update_browse_history step and history/cookie getters read. Chromium writes
# them a moment after it starts, so the build waits for them (a start that exits on its
# own, e.g. --dump-dom, can end before they are written on a loaded host), then ends
# Chromium with SIGTERM, its clean shutdown. The provider checks the result (REQUIRED_FILES
# in local_template.py) and builds again when something is still missing.
chrome_ready() {
    local db
    for db in History Cookies "Web Data"; do [ -s "$CHROME/Default/$db" ] || return 1; done
    [ -s "$CHROME/Local State" ]
}
if command -v chromium >/dev/null; then
    chromium --headless=new --user-data-dir="$CHROME" --no-first-run --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        about:blank >/dev/null 2>&1 &
    chrome_pid=$!
    waited=0
    until chrome_ready || ! kill -0 "$chrome_pid" 2>/dev/null || [ "$waited" -ge 1200 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    chrome_ready || log "chromium's profile databases did not appear within $((waited / 10)) s"
    # SIGTERM is Chromium's clean shutdown: it commits its databases and saves
    # Preferences and Local State on the way out.
    kill -TERM "$chrome_pid" 2>/dev/null || true
    wait "$chrome_pid" 2>/dev/null || true
    # Its network service, which writes Cookies, can outlive the browser process for a
    # moment; one killed mid-write leaves a hot journal beside the database, which a
    # reader that cannot write (a getter's copy, mode=ro) cannot open. Wait for every
    # process of the profile, then open each database once read-write, which rolls back
    # or checkpoints what was left.
    waited=0
    while pgrep -f -- "--user-data-dir=$CHROME" >/dev/null && [ "$waited" -lt 100 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    pkill -KILL -f -- "--user-data-dir=$CHROME" 2>/dev/null || true
    python3 - "$CHROME/Default/History" "$CHROME/Default/Cookies" "$CHROME/Default/Web Data" <<'PY' || true
import sqlite3
import sys

for path in sys.argv[1:]:
    try:
        with sqlite3.connect(path) as db:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        db.close()
    except sqlite3.Error as exc:
        print(f"template: {path}: {exc}", file=sys.stderr)
PY
    # A SIGTERM ends the session as "SessionEnded"; a profile closed by the user says
    # "Normal", which is what OSWorld's image would hold.
    sed -i 's/"exit_type":"SessionEnded"/"exit_type":"Normal"/' "$CHROME/Default/Preferences" 2>/dev/null || true
    rm -rf "$CHROME/Default/"{Cache,"Code Cache",GPUCache,DawnGraphiteCache,DawnWebGPUCache} \
        "$CHROME/"{GrShaderCache,ShaderCache,GraphiteDawnCache} 2>/dev/null || true
fi

# --- VLC: no privacy question, the Lua HTTP interface on 8080 with password "password"
# (OSWorld's VLC getters read /requests/status.xml there), no network metadata.
mkdir -p "$HOME/.config/vlc"
cat >"$HOME/.config/vlc/vlcrc" <<'RC'
[qt]
qt-privacy-ask=0
qt-updates-notif=0
[core]
extraintf=http
metadata-network-access=0
[http]
http-host=127.0.0.1
http-port=8080
http-password=password
[lua]
http-password=password
RC

# --- GIMP 2.10: one batch start creates ~/.config/GIMP/2.10 (otherwise done at the first
# interactive start, which then takes seconds longer); no tips at start.
if command -v gimp >/dev/null; then
    gimp -i -d -f -b '(gimp-quit 0)' >/dev/null 2>&1 || log "gimp init failed"
    mkdir -p "$HOME/.config/GIMP/2.10"
    grep -q show-tips "$HOME/.config/GIMP/2.10/gimprc" 2>/dev/null \
        || echo '(show-tips no)' >>"$HOME/.config/GIMP/2.10/gimprc"
fi

# --- Thunderbird: tasks bring their own profile (a tarball extracted over the home);
# here only the default-browser question and telemetry are turned off for new profiles.
mkdir -p "$HOME/.thunderbird"

# --- Default applications for xdg-open. Videos open in Chromium, standing in for
# Ubuntu's "Videos" app: as on OSWorld's image, VLC is not the default video player
# until the user makes it one (multi_apps 937087b6 asks for exactly that).
cat >"$HOME/.config/mimeapps.list" <<'MIME'
[Default Applications]
application/vnd.openxmlformats-officedocument.spreadsheetml.sheet=libreoffice-calc.desktop
application/vnd.ms-excel=libreoffice-calc.desktop
application/vnd.oasis.opendocument.spreadsheet=libreoffice-calc.desktop
text/csv=libreoffice-calc.desktop
application/vnd.openxmlformats-officedocument.wordprocessingml.document=libreoffice-writer.desktop
application/msword=libreoffice-writer.desktop
application/vnd.oasis.opendocument.text=libreoffice-writer.desktop
application/vnd.openxmlformats-officedocument.presentationml.presentation=libreoffice-impress.desktop
application/vnd.ms-powerpoint=libreoffice-impress.desktop
application/vnd.oasis.opendocument.presentation=libreoffice-impress.desktop
application/pdf=chromium.desktop
text/html=chromium.desktop
x-scheme-handler/http=chromium.desktop
x-scheme-handler/https=chromium.desktop
video/mp4=chromium.desktop
video/x-matroska=chromium.desktop
video/webm=chromium.desktop
video/x-msvideo=chromium.desktop
video/quicktime=chromium.desktop
video/mpeg=chromium.desktop
video/ogg=chromium.desktop
video/x-flv=chromium.desktop
video/3gpp=chromium.desktop
audio/mpeg=vlc.desktop
image/png=gimp.desktop
image/jpeg=gimp.desktop
MIME
# The other video types OSWorld's default_video_player getter counts, so VLC is not the
# default by majority either (it registers for all of them).
for t in 3gp 3gpp2 avi divx dv fli flv mp2t mp4v-es mpeg-system msvideo vnd.divx vnd.mpegurl vnd.rn-realvideo x-anim x-avi x-flc x-fli x-m4v x-mpeg x-mpeg-system x-mpeg2 x-ms-asf x-ms-asf-plugin x-ms-asx x-ms-wm x-ms-wmv x-ms-wmx x-ms-wvx x-nsv x-ogm x-ogm+ogg x-theora x-theora+ogg; do echo "video/$t=chromium.desktop"; done >>"$HOME/.config/mimeapps.list"

# --- Sound: PulseAudio starts on demand (OSWorld's evaluators run `pulseaudio --start`;
# clients autospawn it) with only a null output, since the sandbox has no sound card. Its
# volume starts at 40%, a level a user would call too low, not at the maximum that
# os/28cc3b7e ("turn the volume up to the max") asks for.
mkdir -p "$HOME/.config/pulse"
cat >"$HOME/.config/pulse/default.pa" <<'PA'
.include /etc/pulse/default.pa
set-sink-volume @DEFAULT_SINK@ 26214
PA

# Nothing of this build's own runtime state belongs in the template.
rm -rf "$HOME/.cache/"* /tmp/* 2>/dev/null || true
log "done: $(du -sh "$HOME" | cut -f1)"
