// Opens the main windows of the apps of OSWorld's tasks maximized, beside the dock and
// under the top bar, as they open on OSWorld's Ubuntu image (where each app remembered a
// maximized window). Agents trained there click where a maximized window has its controls
// (Chrome's menu at the top right, GIMP's menus at the top left, VS Code's Manage gear at
// the bottom left); without this, Chromium, GIMP and VS Code opened as windows about 900
// px wide and every such click missed. Dialogs, transient windows, and apps not named here
// (the terminal, VLC, the file manager) keep the size they ask for, as on Ubuntu.
const { Meta } = imports.gi;

// The WM_CLASS class names (lower case, prefix) of the apps whose main windows open maximized.
const MAXIMIZED = ['chromium', 'code', 'gimp', 'thunderbird', 'libreoffice', 'soffice'];

let createdId = 0;

function opensMaximized(window) {
    if (window.get_window_type() !== Meta.WindowType.NORMAL || window.get_transient_for() !== null)
        return false;
    const wmClass = (window.get_wm_class() || '').toLowerCase();
    return MAXIMIZED.some(prefix => wmClass.startsWith(prefix));
}

function maximizeAtOnce(window) {
    // Before the window's first frame, so that the app lays itself out once, at the
    // maximized size (maximizing after it was shown made GIMP lay out twice, blank for
    // seconds in between).
    if (opensMaximized(window))
        window.maximize(Meta.MaximizeFlags.BOTH);
}

function init() {
}

function enable() {
    createdId = global.display.connect('window-created', (_display, window) => maximizeAtOnce(window));
}

function disable() {
    if (createdId)
        global.display.disconnect(createdId);
    createdId = 0;
}
