// Ubuntu 22.04's system menu (GNOME 42's menu at the top bar's right) in place of GNOME
// 43's quick settings. Agents trained on OSWorld's Ubuntu image open it there and click
// where its rows were: the volume slider at the top (y about 55), Settings at (1660, 184),
// Power Off / Log Out below Lock. GNOME 43's quick settings put none of them there.
//
// The rows, top to bottom, as the image shows them: the volume slider; the wired network
// and the power mode (the image's NetworkManager and power-profiles-daemon; neither runs
// in our sandbox, so these two rows only show their state); Settings, Lock, and the Power
// Off / Log Out submenu. The slider sets PulseAudio's volume through the shell's own
// mixer connection; Settings opens GNOME Settings; the session rows ask the shell's
// system actions, which do what the desktop allows.
const { GObject, Gvc, Shell, St } = imports.gi;

const BoxPointer = imports.ui.boxpointer;
const Main = imports.ui.main;
const PanelMenu = imports.ui.panelMenu;
const PopupMenu = imports.ui.popupMenu;
const Slider = imports.ui.slider;
const SystemActions = imports.misc.systemActions;
const Volume = imports.ui.status.volume;

// The speaker icon by volume, as the image's top bar and slider show it.
const VOLUME_ICONS = ['audio-volume-muted-symbolic', 'audio-volume-low-symbolic',
    'audio-volume-medium-symbolic', 'audio-volume-high-symbolic'];

let menuButton = null;

// A row named by its label in the accessibility tree (St gives menu rows no name of their
// own), so that the tree lists "Settings", "Lock"... as GNOME 42's did.
function named(item, name) {
    item.accessible_name = name;
    return item;
}

// Runs one of the shell's system actions; one the desktop cannot do is only logged.
function systemAction(name) {
    try {
        SystemActions.getDefault()[name]();
    } catch (e) {
        log(`osworld-system-menu: ${name}: ${e.message}`);
    }
}

// The volume row: a speaker icon and a slider bound to PulseAudio's default output.
const VolumeItem = GObject.registerClass({
    Signals: { 'icon-changed': {} },
}, class VolumeItem extends PopupMenu.PopupBaseMenuItem {
    _init() {
        super._init({ activate: false, style_class: 'osworld-volume-item' });
        this.accessible_name = 'Volume';
        this._icon = new St.Icon({ style_class: 'popup-menu-icon' });
        this.slider = new Slider.Slider(0);
        this.slider.accessible_name = 'Volume';
        this.add_child(this._icon);
        this.add_child(this.slider);
        // A press anywhere on the row grabs the slider there, as on GNOME 42.
        this.connect('button-press-event', (_actor, event) => this.slider.startDragging(event));
        this.connect('scroll-event', (_actor, event) => this.slider.emit('scroll-event', event));
        this._sliderChangedId = this.slider.connect('notify::value', () => this._sliderChanged());

        this._stream = null;
        this._control = Volume.getMixerControl();
        this._control.connectObject(
            'state-changed', () => this._readStream(),
            'default-sink-changed', () => this._readStream(), this);
        this.connect('destroy', () => {
            this._stream?.disconnectObject(this);
            this._control.disconnectObject(this);
        });
        this._readStream();
    }

    _readStream() {
        this._stream?.disconnectObject(this);
        const ready = this._control.get_state() === Gvc.MixerControlState.READY;
        this._stream = ready ? this._control.get_default_sink() : null;
        this._stream?.connectObject(
            'notify::volume', () => this._streamChanged(),
            'notify::is-muted', () => this._streamChanged(), this);
        this._streamChanged();
    }

    // The stream's volume shown on the slider (without writing it back).
    _streamChanged() {
        const level = this._stream && !this._stream.is_muted
            ? this._stream.volume / this._control.get_vol_max_norm() : 0;
        this.slider.block_signal_handler(this._sliderChangedId);
        this.slider.value = Math.min(level, 1);
        this.slider.unblock_signal_handler(this._sliderChangedId);
        const step = level <= 0 ? 0 : Math.min(Math.ceil(3 * level), 3);
        this._icon.icon_name = VOLUME_ICONS[step];
        this.emit('icon-changed');
    }

    // The slider's value written to the stream: 0 mutes it, anything else unmutes it.
    _sliderChanged() {
        if (!this._stream)
            return;
        const volume = this.slider.value * this._control.get_vol_max_norm();
        this._stream.volume = volume < 1 ? 0 : volume;
        this._stream.change_is_muted(volume < 1);
        this._stream.push_volume();
    }

    get iconName() {
        return this._icon.icon_name;
    }
});

// A submenu row whose entries pick one state, shown with a dot (the power mode).
function choiceSubmenu(menu, icons, labels, current) {
    const row = new PopupMenu.PopupSubMenuMenuItem('', true);
    const items = labels.map((label, i) => {
        const item = named(new PopupMenu.PopupMenuItem(label), label);
        item.connect('activate', () => pick(i));
        row.menu.addMenuItem(item);
        return item;
    });
    function pick(index) {
        items.forEach((item, i) => item.setOrnament(i === index
            ? PopupMenu.Ornament.DOT : PopupMenu.Ornament.NONE));
        row.label.text = labels[index];
        named(row, labels[index]);
        row.icon.icon_name = icons[index];
    }
    pick(current);
    menu.addMenuItem(row);
    return row;
}

const SystemMenu = GObject.registerClass(
class SystemMenu extends PanelMenu.Button {
    _init() {
        // Named "System" in the accessibility tree, as both GNOME 42's menu and 43's are.
        super._init(0.0, 'System');
        this.menu.actor.add_style_class_name('osworld-system-menu');

        // The top bar's icons: the network, the volume, and the power button.
        const indicators = new St.BoxLayout({ style_class: 'panel-status-indicators-box' });
        const icon = name => new St.Icon({ style_class: 'system-status-icon', icon_name: name });
        const volumeIcon = icon('audio-volume-medium-symbolic');
        [icon('network-wired-symbolic'), volumeIcon, icon('system-shutdown-symbolic')]
            .forEach(child => indicators.add_child(child));
        this.add_child(indicators);

        this._volume = new VolumeItem();
        this._volume.connect('icon-changed', () => (volumeIcon.icon_name = this._volume.iconName));
        volumeIcon.icon_name = this._volume.iconName;
        this.menu.addMenuItem(this._volume);
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());

        const wired = named(new PopupMenu.PopupSubMenuMenuItem('Wired Connected', true), 'Wired Connected');
        wired.icon.icon_name = 'network-wired-symbolic';
        wired.menu.addMenuItem(named(new PopupMenu.PopupMenuItem('Turn Off'), 'Turn Off'));
        named(wired.menu.addSettingsAction('Wired Settings', 'gnome-network-panel.desktop'), 'Wired Settings');
        this.menu.addMenuItem(wired);
        const power = choiceSubmenu(this.menu,
            ['power-profile-balanced-symbolic', 'power-profile-power-saver-symbolic'],
            ['Balanced', 'Power Saver'], 0);
        power.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        named(power.menu.addSettingsAction('Power Settings', 'gnome-power-panel.desktop'), 'Power Settings');
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());

        // Settings, as GNOME 42's menu opens it.
        const app = Shell.AppSystem.get_default().lookup_app('org.gnome.Settings.desktop');
        const settings = named(new PopupMenu.PopupImageMenuItem('Settings',
            app ? app.app_info.get_icon() : 'preferences-system-symbolic'), 'Settings');
        settings.connect('activate', () => {
            this.menu.itemActivated(BoxPointer.PopupAnimation.NONE);
            Main.overview.hide();
            app?.activate();
        });
        this.menu.addMenuItem(settings);
        this._actionItem(this.menu, 'Lock', 'activateLockScreen', 'changes-prevent-symbolic');

        const session = named(new PopupMenu.PopupSubMenuMenuItem('Power Off / Log Out', true),
            'Power Off / Log Out');
        session.icon.icon_name = 'system-shutdown-symbolic';
        this._actionItem(session.menu, 'Suspend', 'activateSuspend');
        this._actionItem(session.menu, 'Restart…', 'activateRestart');
        this._actionItem(session.menu, 'Power Off…', 'activatePowerOff');
        session.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._actionItem(session.menu, 'Log Out', 'activateLogout');
        this.menu.addMenuItem(session);
    }

    // A row that closes the menu and runs one of the shell's system actions.
    _actionItem(menu, label, action, iconName) {
        const item = named(iconName
            ? new PopupMenu.PopupImageMenuItem(label, iconName)
            : new PopupMenu.PopupMenuItem(label), label);
        item.connect('activate', () => {
            this.menu.itemActivated(BoxPointer.PopupAnimation.NONE);
            systemAction(action);
        });
        menu.addMenuItem(item);
    }
});

function init() {
}

function enable() {
    // GNOME 43's quick settings stay (the shell refers to them) but are hidden; ours take
    // their place at the right end of the top bar.
    Main.panel.statusArea.quickSettings.container.hide();
    menuButton = new SystemMenu();
    Main.panel.addToStatusArea('osworld-system-menu', menuButton,
        Main.panel._rightBox.get_n_children(), 'right');
}

function disable() {
    menuButton?.destroy();
    menuButton = null;
    Main.panel.statusArea.quickSettings.container.show();
}
