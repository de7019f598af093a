"""The vagrant provider without a VM: options, the Vagrantfile's environment, the package."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.vagrant import (
    DEFAULT_VAGRANT_DIR,
    VagrantOptions,
    VagrantProvider,
    machine_name,
    package_tarball,
    tail,
    vagrant_command,
    vagrant_env,
)
from pytest_osworld.providers.vagrant_box import bring_up
from pytest_osworld.providers.vagrant_config import (
    BOX_WITH_BUILD,
    GNOME_WITHOUT_GNOME_BOX,
    GUEST_PORT_WITH_OSWORLD_SERVER,
    HOST_PORT_WITH_LIBVIRT,
    LIBVIRT_BOX_WITH_VIRTUALBOX,
    LIBVIRT_ONLY,
    MINIMAL_WITHOUT_PROVISION,
    PROVISION_WITH_IMAGE,
    SESSION_WITH_IMAGE,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGES = REPO / "pytest_osworld" / "providers" / "local_desktop" / "packages.txt"


def parse(**options: str) -> VagrantOptions:
    return VagrantOptions.parse(options)


def test_registered_and_check_options():
    cls = PROVIDERS.get("vagrant")
    assert cls is VagrantProvider
    cls.check_options({"box": "osworld/debian12-minimal-abc"})
    with pytest.raises(ValueError, match="box=NAME, build"):
        cls.check_options({})


def test_defaults(tmp_path):
    opts = parse(box="osworld/x", cache_dir=str(tmp_path))
    assert opts.box == "osworld/x"
    assert opts.memory == 2048 and opts.cpus == 2
    assert opts.vagrant_provider == "libvirt"
    assert opts.libvirt_uri == "qemu:///system"
    assert opts.libvirt_driver in ("kvm", "qemu")
    assert opts.storage_pool == "default"
    assert opts.netns is None and not opts.keep_vms and not opts.provision
    assert opts.guest_port == 5000
    assert opts.session == "openbox"
    assert opts.cache_dir == tmp_path
    assert opts.vagrant_dir == DEFAULT_VAGRANT_DIR


def test_all_options(tmp_path):
    opts = parse(
        build="minimal",
        memory="1024",
        cpus="1",
        libvirt_uri="qemu+ssh://ci@hv1.example.org/system",
        libvirt_driver="qemu",
        storage_pool="osworld",
        netns="osw-ci.1",
        keep_vms="1",
        provision="yes",
        minimal="true",
        vagrant_home=str(tmp_path / "vh"),
        guest_port="5001",
        up_timeout="900",
        ready_timeout="60",
    )
    assert opts.build == "minimal" and opts.box is None
    assert (opts.memory, opts.cpus) == (1024, 1)
    assert opts.libvirt_uri.startswith("qemu+ssh://")
    assert opts.libvirt_driver == "qemu"
    assert opts.netns == "osw-ci.1"
    assert opts.keep_vms and opts.provision and opts.minimal
    assert opts.vagrant_home == tmp_path / "vh"
    assert opts.guest_port == 5001
    assert (opts.up_timeout, opts.ready_timeout) == (900.0, 60.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"box": "b", "colour": "red"}, "unknown vagrant provider option"),
        ({"box": "b", "memory": "lots"}, "memory='lots': not an integer"),
        ({"box": "b", "cpus": "0"}, "cpus='0': must be positive"),
        ({"box": "b", "keep_vms": "maybe"}, "keep_vms='maybe'"),
        ({"box": "b", "libvirt_uri": "http://host"}, "libvirt_uri"),
        ({"box": "b", "libvirt_driver": "xen"}, "libvirt_driver"),
        ({"box": "b", "netns": "bad name"}, "netns='bad name'"),
        ({"box": "b", "vagrant_provider": "docker"}, "vagrant_provider"),
        ({"box": "b", "guest_port": "70000"}, "not a port"),
        ({"box": "has spaces"}, "not a box name"),
        ({"build": "huge"}, "build='huge'"),
        ({"build": "minimal", "box_file": "/x.box"}, "box_file needs box"),
        ({"build": "full", "session": "kde"}, "session='kde': use openbox or gnome"),
    ],
)
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        VagrantOptions.parse(options)


IMAGE = {"image": "osworld", "image_file": "/images/Ubuntu.qcow2"}
VBOX = {"box": "b", "vagrant_provider": "virtualbox"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"box": "b", "build": "minimal"}, BOX_WITH_BUILD.format(build="minimal", box="b")),
        ({"box": "b", "box_file": "/b.box", "build": "full"}, BOX_WITH_BUILD.format(build="full", box="b")),
        ({"box": "b", "minimal": "1"}, MINIMAL_WITHOUT_PROVISION),
        ({"build": "minimal", "minimal": "1", "provision": "0"}, MINIMAL_WITHOUT_PROVISION),
        ({**IMAGE, "provision": "1"}, PROVISION_WITH_IMAGE),
        ({**IMAGE, "provision": "1", "minimal": "1"}, PROVISION_WITH_IMAGE),
        (
            {**IMAGE, "vagrant_provider": "virtualbox"},
            LIBVIRT_BOX_WITH_VIRTUALBOX.format(key="image", value="osworld"),
        ),
        (
            {"build": "full", "vagrant_provider": "virtualbox"},
            LIBVIRT_BOX_WITH_VIRTUALBOX.format(key="build", value="full"),
        ),
        (
            {**VBOX, "libvirt_uri": "qemu:///system"},
            LIBVIRT_ONLY.format(key="libvirt_uri", value="qemu:///system"),
        ),
        ({**VBOX, "libvirt_driver": "kvm"}, LIBVIRT_ONLY.format(key="libvirt_driver", value="kvm")),
        ({**VBOX, "storage_pool": "osworld"}, LIBVIRT_ONLY.format(key="storage_pool", value="osworld")),
        ({**VBOX, "vm_network": "host-only"}, LIBVIRT_ONLY.format(key="vm_network", value="host-only")),
        ({"box": "b", "host_port": "15000"}, HOST_PORT_WITH_LIBVIRT.format(port="15000")),
        ({"box": "b", "netns": "osw", "host_port": "15000"}, HOST_PORT_WITH_LIBVIRT.format(port="15000")),
        (
            {**IMAGE, "server": "osworld", "netns": "osw", "guest_port": "5001"},
            GUEST_PORT_WITH_OSWORLD_SERVER.format(port=5001),
        ),
        ({**IMAGE, "session": "gnome"}, SESSION_WITH_IMAGE.format(session="gnome")),
        (
            {"build": "minimal", "session": "gnome"},
            GNOME_WITHOUT_GNOME_BOX.format(what="the minimal box (build=minimal)"),
        ),
        (
            {"box": "b", "provision": "1", "minimal": "1", "session": "gnome"},
            GNOME_WITHOUT_GNOME_BOX.format(what="provision=1 with minimal=1"),
        ),
    ],
)
def test_options_that_would_be_ignored_are_refused(options, message):
    """An option given in a mode that does not use it is a ValueError (a usage error) naming
    it and what to use instead, never silently dropped."""
    with pytest.raises(ValueError) as caught:
        VagrantProvider.check_options(options)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "options",
    [
        {"box": "b", "provision": "1", "minimal": "1"},
        {"build": "minimal", "provision": "1", "minimal": "1"},
        {"box": "b", "minimal": "0"},
        {**VBOX, "host_port": "15001", "vm_network": "nat", "memory": "1024", "cpus": "1"},
        {"box": "b", "libvirt_uri": "qemu:///system", "storage_pool": "osworld", "vm_network": "host-only"},
        {**IMAGE, "memory": "4096", "cpus": "4", "provision": "0", "guest_port": "5001"},
        {**IMAGE, "server": "osworld", "vm_network": "host-only", "guest_port": "5000"},
        {"build": "full", "session": "gnome"},
        {"box": "b", "provision": "1", "session": "gnome"},
        {"build": "minimal", "session": "openbox"},
    ],
)
def test_options_used_in_their_mode_are_accepted(options):
    VagrantProvider.check_options(options)


def test_network_is_the_vms_own(tmp_path):
    """No shared ``network=`` for a VM: vm_network sets it, and says whether live pages load."""
    assert VagrantProvider.network_modes == ()
    assert "vm_network=host-only" in VagrantProvider.network_instead
    assert "vm_network=nat" in VagrantProvider.network_instead

    def live(**options: str) -> bool:
        config = ProviderConfig(worker_id="gw0", options={"box": "b", "cache_dir": str(tmp_path), **options})
        return VagrantProvider(config).live_network

    assert live()
    assert not live(vm_network="host-only")
    assert not live(netns="osw")


def test_the_top_bar_clock_is_gnomes(tmp_path):
    """A budget replay leaves the clock out on GNOME's screens only: our boxes' gnome session
    and OSWorld's Ubuntu image, not the openbox session (the boxes' default)."""

    def clock(**options: str) -> bool:
        config = ProviderConfig(worker_id="gw0", options={"cache_dir": str(tmp_path), **options})
        return VagrantProvider(config).top_bar_clock

    assert not clock(box="b")
    assert clock(box="b", session="gnome")
    assert clock(image="osworld", image_file=str(tmp_path / "Ubuntu.qcow2"))


def test_machine_names():
    assert machine_name("gw0") == "osworld-gw0"
    assert machine_name("main") == "osworld-main"
    assert machine_name("it_gw1") == "osworld-it-gw1"
    assert machine_name("") == "osworld-main"


def test_vagrant_env(tmp_path):
    opts = parse(
        box="osworld/b",
        memory="1536",
        cpus="2",
        libvirt_driver="qemu",
        storage_pool="osworld",
        session="gnome",
    )
    env = vagrant_env(
        opts,
        name="osworld-gw3",
        box="osworld/b",
        dotfile_dir=tmp_path / "dot",
        console_log=tmp_path / "console.log",
        package=tmp_path / "pkg.tar.gz",
        token_file=None,
        screen=(1920, 1080),
        host_port=None,
        base={"PATH": "/usr/bin", "OSWORLD_TOKEN_FILE": "/stale", "OSWORLD_HOST_PORT": "1"},
    )
    assert env["PATH"] == "/usr/bin"
    assert env["VAGRANT_DOTFILE_PATH"] == str(tmp_path / "dot")
    assert env["VAGRANT_DEFAULT_PROVIDER"] == "libvirt"
    assert env["VAGRANT_CHECKPOINT_DISABLE"] == "1"
    assert env["OSWORLD_VM_NAME"] == "osworld-gw3"
    assert env["OSWORLD_BOX"] == "osworld/b"
    assert env["OSWORLD_MEMORY"] == "1536"
    assert env["OSWORLD_LIBVIRT_DRIVER"] == "qemu"
    assert env["OSWORLD_STORAGE_POOL"] == "osworld"
    assert env["OSWORLD_SCREEN"] == "1920x1080"
    assert env["OSWORLD_SESSION"] == "gnome"
    assert env["OSWORLD_GUEST_PORT"] == "5000"
    assert env["OSWORLD_CONSOLE_LOG"] == str(tmp_path / "console.log")
    assert env["OSWORLD_PACKAGE"] == str(tmp_path / "pkg.tar.gz")
    # Values inherited from the caller's environment never leak into the VM's config.
    assert "OSWORLD_TOKEN_FILE" not in env and "OSWORLD_HOST_PORT" not in env
    assert "VAGRANT_HOME" not in env


def test_vagrant_command_netns():
    assert vagrant_command(None, ["up"]) == ["vagrant", "up"]
    assert vagrant_command("osw", ["snapshot", "save", "s"]) == [
        "ip",
        "netns",
        "exec",
        "osw",
        "vagrant",
        "snapshot",
        "save",
        "s",
    ]


def test_package_tarball(tmp_path):
    path = package_tarball(tmp_path / "p.tar.gz")
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
    assert "pytest_osworld/guest/__main__.py" in names
    assert "pytest_osworld/providers/local_desktop/session.sh" in names
    assert "pytest_osworld/providers/local_desktop/packages.txt" in names
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)


def test_logs_and_restore_before_start(tmp_path):
    provider = VagrantProvider(
        ProviderConfig(worker_id="gw0", options={"box": "osworld/b", "cache_dir": str(tmp_path)})
    )
    assert provider.machine == "osworld-gw0"
    assert "osworld-gw0" in provider.describe() and "osworld/b" in provider.describe()
    assert provider.logs() == ""
    provider.console_log.parent.mkdir(parents=True)
    provider.console_log.write_text("".join(f"line {i}\r\n" for i in range(100)) + "\x1b[0mlast\n")
    logs = provider.logs()
    assert "serial console" in logs and "line 99" in logs and "last" in logs
    assert "line 10\n" not in logs
    with pytest.raises(EnvironmentFailure, match="before start"):
        provider.restore("init_state")


def test_tail_missing(tmp_path):
    assert tail(tmp_path / "nope", 5) == ""


def _packages(section: str | None) -> list[str]:
    """The package list as install-apt.sh (all) and provision.sh (--minimal: core) read it."""
    awk = "1" if section is None else "/^## core/{on=1;next} /^## /{on=0} on"
    out = subprocess.run(
        ["bash", "-c", f"awk '{awk}' \"$0\" | sed -e 's/#.*//' | tr -s ' \\t' '\\n' | sed '/^$/d'", PACKAGES],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.split()


def test_shared_package_list():
    everything = _packages(None)
    core = _packages("core")
    assert set(core) < set(everything)
    for needed in ("xvfb", "openbox", "at-spi2-core", "python3-pyatspi", "python3-tk", "socat", "xterm"):
        assert needed in core
    for app in ("libreoffice-calc", "chromium", "gimp", "vlc"):
        assert app in everything and app not in core
    install = (REPO / "scripts" / "install-apt.sh").read_text()
    assert "local_desktop/packages.txt" in install
    provision = (REPO / "vagrant" / "provision.sh").read_text()
    assert "packages.txt" in provision


@pytest.mark.skipif(shutil.which("vagrant") is None, reason="vagrant is not installed")
def test_vagrantfile_reads_the_environment(tmp_path):
    """``vagrant status`` of a fresh dotfile dir: the machine name and box come from env."""
    opts = parse(box="osworld/unit-test-box", libvirt_driver="qemu")
    env = vagrant_env(
        opts,
        name="osworld-unit",
        box="osworld/unit-test-box",
        dotfile_dir=tmp_path / "dot",
        console_log=tmp_path / "console.log",
        package=None,
        token_file=None,
        screen=(1280, 720),
        host_port=None,
    )
    env["VAGRANT_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        ["vagrant", "status", "--machine-readable"],
        cwd=DEFAULT_VAGRANT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ",osworld-unit,state,not_created" in proc.stdout
    assert ",osworld-unit,provider-name,libvirt" in proc.stdout


@pytest.mark.parametrize(
    ("state", "snapshots", "commands"),
    [
        ("not_created", "", [["up"]]),
        (
            "running",
            "osworld-ready\n",
            [["snapshot", "restore", "--no-provision", "osworld-ready"], ["provision"]],
        ),
        (
            "shutoff",
            "osworld-ready\n",
            [["snapshot", "restore", "--no-provision", "osworld-ready"], ["up", "--provision"]],
        ),
        ("shutoff", "No snapshots have been taken yet!\n", [["up", "--provision"]]),
    ],
)
def test_bring_up_deploys_once(tmp_path, state, snapshots, commands):
    """A new machine is brought up; a kept one is restored to its clean snapshot, then deployed
    once: ``provision`` while it runs (``up --provision`` would deploy twice there)."""
    seen: list[list[str]] = []

    def run(args: list[str], *, timeout: float, check: bool = True) -> str:
        seen.append(args)
        if args[0] == "status":
            return f"1764000000,osworld-main,state,{state}\n"
        return snapshots if args[:2] == ["snapshot", "list"] else ""

    timings: dict[str, float] = {}
    record = tmp_path / "box"
    record.write_text("osworld/x")
    options = parse(box="osworld/x", cache_dir=str(tmp_path))
    bring_up(run, options, box="osworld/x", box_record=record, timings=timings)
    assert [
        args for args in seen if args[0] not in ("status", "snapshot") or args[1] == "restore"
    ] == commands
    assert "up" in timings


@pytest.mark.parametrize("state", ["running", "shutoff"])
def test_a_kept_machine_of_another_box_is_made_anew(tmp_path, state):
    """After a box rebuild (a new name), a kept VM would run the old desktop: it is destroyed
    and brought up from the new box, which is then recorded."""
    seen: list[list[str]] = []

    def run(args: list[str], *, timeout: float, check: bool = True) -> str:
        seen.append(args)
        if args[0] == "status":
            return f"1764000000,osworld-main,state,{state}\n"
        return "osworld-ready\n" if args[:2] == ["snapshot", "list"] else ""

    record = tmp_path / "box"
    record.write_text("osworld/debian12-minimal-old")
    new = "osworld/debian12-minimal-new"
    bring_up(run, parse(box=new, cache_dir=str(tmp_path)), box=new, box_record=record, timings={})
    assert [args for args in seen if args[0] != "status"] == [["destroy", "-f"], ["up"]]
    assert record.read_text() == new
