// The overview's search entry takes the first Ctrl+V of a session, as on OSWorld's Ubuntu
// image. Agents open Activities and type with pyperclip.copy(...) then Ctrl+V; here that
// first paste was lost in two ways, both of which IBus (running on Ubuntu, absent here)
// hides there by routing every key of a shell entry through ibus-daemon and back:
//
// - Typing into the overview before the entry has the focus starts a search by handing
//   that key to the entry's inner text actor only (SearchController.startSearch), so a
//   Ctrl+V never reaches St.Entry's paste. IBus sends the key back through the stage to
//   the entry, which then pastes. Here the key goes on to the entry itself.
// - A Ctrl+V right after an X client (pyperclip's xclip) took the clipboard finds the
//   shell not yet aware of that owner (mutter learns of it asynchronously, one round trip
//   later), and the very first one of a session finds no owner at all, so it pastes
//   nothing. IBus's round trip gives mutter that time. Here a paste asked for while the
//   clipboard has no owner waits for one, half a second at most.
const { Clutter, GLib, Meta, St } = imports.gi;

const Main = imports.ui.main;
const { SearchController } = imports.ui.searchController;

// The longest a paste waits for the clipboard's owner (ms).
const OWNER_WAIT = 500;

let originalStartSearch = null;
let keyPressId = 0;
// The paste being held: { entry, event, ownerId, timeoutId }, or null.
let held = null;
let replaying = false;

// The search begins with its first key in the entry, as a focused entry gets any key:
// the text actor first, then St.Entry (paste, copy) when the text did not take it.
function startSearch(event) {
    global.stage.set_key_focus(this._text);
    if (!this._text.event(event, false))
        this._entry.event(event, false);
}

function isPaste(event) {
    const key = event.get_key_symbol();
    const state = event.get_state();
    return ((state & Clutter.ModifierType.CONTROL_MASK) && (key === Clutter.KEY_v || key === Clutter.KEY_V)) ||
        ((state & Clutter.ModifierType.SHIFT_MASK) && key === Clutter.KEY_Insert);
}

function clipboardHasOwner() {
    return St.Clipboard.get_default().get_mimetypes(St.ClipboardType.CLIPBOARD).length > 0;
}

// Hands the held paste to its entry again (St.Entry pastes it), or drops it on disable.
function release(replay = true) {
    if (!held)
        return;
    const { entry, event, ownerId, timeoutId } = held;
    held = null;
    global.display.get_selection().disconnect(ownerId);
    if (timeoutId)
        GLib.source_remove(timeoutId);
    if (replay) {
        replaying = true;
        entry.event(event, false);
        replaying = false;
    }
}

// Runs before St.Entry's own handler: a paste while the clipboard has no owner is held
// until the selection gets one, or the wait ends.
function onKeyPress(entry, event) {
    if (replaying || held || !isPaste(event) || clipboardHasOwner())
        return Clutter.EVENT_PROPAGATE;
    const ownerId = global.display.get_selection().connect('owner-changed', (_selection, type) => {
        if (type === Meta.SelectionType.SELECTION_CLIPBOARD)
            release();
    });
    const timeoutId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, OWNER_WAIT, () => {
        held.timeoutId = 0;
        release();
        return GLib.SOURCE_REMOVE;
    });
    held = { entry, event: event.copy(), ownerId, timeoutId };
    return Clutter.EVENT_STOP;
}

function init() {
}

function enable() {
    originalStartSearch = SearchController.prototype.startSearch;
    SearchController.prototype.startSearch = startSearch;
    keyPressId = Main.overview.searchEntry.connect('key-press-event', onKeyPress);
}

function disable() {
    release(false);
    SearchController.prototype.startSearch = originalStartSearch;
    Main.overview.searchEntry.disconnect(keyPressId);
    keyPressId = 0;
}
