"""The vagrant provider's settings and command line: its options, the machine names, the
environment ``vagrant/Vagrantfile`` reads, and the ``vagrant`` command (inside a network
namespace when asked).

Also owns :class:`VagrantError`, the error every part of the provider raises, and the
snapshot's name. The options are documented in :mod:`pytest_osworld.providers.vagrant`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers.base import flag_option
from pytest_osworld.providers.local import SESSION_PROGRAMS

#: The package deployed into each VM (this source tree or installed copy).
PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: The repository's ``vagrant/`` directory, when running from a source tree.
DEFAULT_VAGRANT_DIR = PACKAGE_DIR.parent / "vagrant"
#: The snapshot saved once the desktop is ready; every task restores it.
SNAPSHOT = "osworld-ready"

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_BOX_RE = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?$")
_OPTIONS = {
    "box",
    "box_file",
    "build",
    "memory",
    "cpus",
    "vagrant_provider",
    "libvirt_uri",
    "libvirt_driver",
    "storage_pool",
    "netns",
    "keep_vms",
    "provision",
    "minimal",
    "cache_dir",
    "vagrant_home",
    "vagrant_dir",
    "guest_port",
    "host_port",
    "up_timeout",
    "ready_timeout",
    "image",
    "image_file",
    "server",
    "vm_network",
    "session",
}
#: Why ``server=osworld`` needs an isolated network: the image's server has no token.
OSWORLD_SERVER_EXPOSURE = (
    "vagrant provider option server=osworld talks to the image's own server, which has no "
    "token and runs any command it is sent (as a user with sudo), so it is allowed only where "
    "nothing but this host can reach the VM: add --provider-arg netns=NAME (a network "
    "namespace, see vagrant/netns.sh) or --provider-arg vm_network=host-only (an isolated "
    "libvirt network), or use server=ours (the default: our server, with a per-VM token)"
)

#: Options that mean something only in some modes: given in another, they would be ignored
#: (or break the VM later), so they are refused when the options are parsed.
BOX_WITH_BUILD = (
    "vagrant provider option build={build} builds and uses its own box, so box={box} would be "
    "ignored: give box=NAME (and box_file=PATH to import it) or build=minimal|full, not both"
)
MINIMAL_WITHOUT_PROVISION = (
    "vagrant provider option minimal=1 only changes what provision=1 installs (provision.sh "
    "--minimal), so without provision=1 it would be ignored: add provision=1 (a base box), "
    "or use build=minimal (the offline minimal box)"
)
PROVISION_WITH_IMAGE = (
    "vagrant provider option provision=1 turns a base box into our desktop; image=osworld is "
    "OSWorld's finished desktop, not a base box: drop provision (and minimal)"
)
LIBVIRT_ONLY = (
    "vagrant provider option {key}={value} is for vagrant_provider=libvirt; with "
    "vagrant_provider=virtualbox it would be ignored: drop it, or use vagrant_provider=libvirt"
)
LIBVIRT_BOX_WITH_VIRTUALBOX = (
    "vagrant provider option {key}={value} makes a libvirt box, which VirtualBox cannot boot: "
    "use vagrant_provider=libvirt (the default), or a VirtualBox box=NAME"
)
HOST_PORT_WITH_LIBVIRT = (
    "vagrant provider option host_port={port} is the host port VirtualBox forwards to the "
    "guest; with vagrant_provider=libvirt the provider reaches the guest at the VM's own "
    "address (through a relay when netns is set), so it would be ignored: drop host_port, "
    "or use vagrant_provider=virtualbox"
)
GNOME_WITHOUT_GNOME_BOX = (
    "vagrant provider option session=gnome runs GNOME Shell, which {what} does not install: "
    "use build=full (or provision=1 without minimal=1), or session=openbox"
)
SESSION_WITH_IMAGE = (
    "vagrant provider option session={session} picks our box's desktop session; OSWorld's image "
    "runs its own GNOME session: drop session"
)
GUEST_PORT_WITH_OSWORLD_SERVER = (
    "vagrant provider option guest_port={port} moves our guest server; with server=osworld the "
    "image's own server listens on 5000 whatever guest_port says: drop guest_port, or use "
    "server=ours"
)


class VagrantError(EnvironmentFailure):
    """A Vagrant command, the VM or its guest server failed; the message has the logs."""


def _default_driver() -> str:
    """``kvm`` where a hardware KVM module is loaded, else ``qemu`` (TCG)."""
    modules = Path("/sys/module")
    return "kvm" if (modules / "kvm_intel").exists() or (modules / "kvm_amd").exists() else "qemu"


def _number(options: dict[str, str], key: str, default: float, *, integer: bool = False) -> float:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = float(int(raw)) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"vagrant provider option {key}={raw!r}: not {kind}") from None
    if value <= 0:
        raise ValueError(f"vagrant provider option {key}={raw!r}: must be positive")
    return value


@dataclass(frozen=True)
class VagrantOptions:
    """The provider's settings, parsed and validated from ``ProviderConfig.options``."""

    cache_dir: Path
    vagrant_dir: Path
    box: str | None = None
    box_file: Path | None = None
    build: str | None = None
    memory: int = 2048
    cpus: int = 2
    vagrant_provider: str = "libvirt"
    libvirt_uri: str = "qemu:///system"
    libvirt_driver: str = "qemu"
    storage_pool: str = "default"
    netns: str | None = None
    keep_vms: bool = False
    provision: bool = False
    minimal: bool = False
    vagrant_home: Path | None = None
    guest_port: int = 5000
    host_port: int | None = None
    up_timeout: float = 1800.0
    ready_timeout: float = 300.0
    image: str | None = None
    image_file: Path | None = None
    server: str = "ours"
    vm_network: str = "nat"
    session: str = "openbox"

    @classmethod
    def parse(cls, options: dict[str, str]) -> VagrantOptions:
        """Validate ``options``; a bad value raises ``ValueError`` naming the option."""
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ValueError(
                f"unknown vagrant provider option(s): {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(_OPTIONS))})"
            )
        box = options.get("box") or None
        build = options.get("build") or None
        if build is not None and build not in ("minimal", "full"):
            raise ValueError(f"vagrant provider option build={build!r}: use minimal or full")
        image, image_file, server, vm_network = _image_options(options)
        if image is not None and (box is not None or build is not None):
            raise ValueError("vagrant provider option image=osworld replaces box and build: give only one")
        if box is None and build is None and image is None:
            raise ValueError(
                "the vagrant provider needs --provider-arg box=NAME, build=minimal|full or "
                "image=osworld with image_file=PATH"
            )
        if server == "osworld" and not options.get("netns") and vm_network != "host-only":
            raise ValueError(OSWORLD_SERVER_EXPOSURE)
        if box is not None and not _BOX_RE.match(box):
            raise ValueError(f"vagrant provider option box={box!r}: not a box name (owner/name)")
        box_file = Path(options["box_file"]).expanduser() if options.get("box_file") else None
        if box_file is not None and box is None:
            raise ValueError("vagrant provider option box_file needs box=NAME (the name to import it as)")
        vagrant_provider = options.get("vagrant_provider", "libvirt")
        if vagrant_provider not in ("libvirt", "virtualbox"):
            raise ValueError(
                f"vagrant provider option vagrant_provider={vagrant_provider!r}: use libvirt or virtualbox"
            )
        uri = options.get("libvirt_uri", "qemu:///system")
        if not re.match(r"^qemu(\+[a-z]+)?://[^\s]*/(system|session)(\?[^\s]*)?$", uri):
            raise ValueError(
                f"vagrant provider option libvirt_uri={uri!r}: expected qemu:///system or "
                f"qemu+ssh://user@host/system"
            )
        driver = options.get("libvirt_driver") or _default_driver()
        if driver not in ("kvm", "qemu"):
            raise ValueError(f"vagrant provider option libvirt_driver={driver!r}: use kvm or qemu")
        for key in ("storage_pool", "netns"):
            value = options.get(key)
            if value is not None and not _NAME_RE.match(value):
                raise ValueError(f"vagrant provider option {key}={value!r}: letters, digits, _ . - only")
        port = int(_number(options, "guest_port", 5000, integer=True))
        if port > 65535:
            raise ValueError(f"vagrant provider option guest_port={port}: not a port")
        host_port = int(_number(options, "host_port", 1, integer=True)) if "host_port" in options else None
        if host_port is not None and host_port > 65535:
            raise ValueError(f"vagrant provider option host_port={host_port}: not a port")
        session = options.get("session") or "openbox"
        if session not in SESSION_PROGRAMS:  # the local desktop's sessions, which our boxes run
            choices = " or ".join(SESSION_PROGRAMS)
            raise ValueError(f"vagrant provider option session={session!r}: use {choices}")
        _refuse_ignored(options, box=box, build=build, image=image, server=server, port=port)
        default_cache = (
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-osworld" / "vagrant"
        )
        return cls(
            cache_dir=Path(options.get("cache_dir") or default_cache).expanduser(),
            vagrant_dir=Path(options.get("vagrant_dir") or DEFAULT_VAGRANT_DIR).expanduser(),
            box=box,
            box_file=box_file,
            build=build,
            memory=int(_number(options, "memory", 2048, integer=True)),
            cpus=int(_number(options, "cpus", 2, integer=True)),
            vagrant_provider=vagrant_provider,
            libvirt_uri=uri,
            libvirt_driver=driver,
            storage_pool=options.get("storage_pool") or "default",
            netns=options.get("netns") or None,
            keep_vms=flag_option(options, "keep_vms", "vagrant"),
            provision=flag_option(options, "provision", "vagrant"),
            minimal=flag_option(options, "minimal", "vagrant"),
            vagrant_home=Path(options["vagrant_home"]).expanduser() if options.get("vagrant_home") else None,
            guest_port=port,
            host_port=host_port,
            up_timeout=_number(options, "up_timeout", 1800.0),
            ready_timeout=_number(options, "ready_timeout", 300.0),
            image=image,
            image_file=image_file,
            server=server,
            vm_network=vm_network,
            session=session,
        )


def _image_options(options: dict[str, str]) -> tuple[str | None, Path | None, str, str]:
    """``image``, ``image_file``, ``server`` and ``vm_network``, checked together."""
    image = options.get("image") or None
    if image is not None and image != "osworld":
        raise ValueError(f"vagrant provider option image={image!r}: the one image known is osworld")
    image_file = Path(options["image_file"]).expanduser().resolve() if options.get("image_file") else None
    if image is not None and image_file is None:
        raise ValueError(
            "vagrant provider option image=osworld needs image_file=PATH (Ubuntu.qcow2 or OSWorld's "
            "zip of it; `pytest-osworld-image download --dest DIR` fetches it)"
        )
    if image is None and image_file is not None:
        raise ValueError("vagrant provider option image_file needs image=osworld")
    server = options.get("server") or "ours"
    if server not in ("ours", "osworld"):
        raise ValueError(f"vagrant provider option server={server!r}: use ours or osworld")
    if server == "osworld" and image is None:
        raise ValueError(
            "vagrant provider option server=osworld needs image=osworld (our boxes run our own server)"
        )
    vm_network = options.get("vm_network") or "nat"
    if vm_network not in ("nat", "host-only"):
        raise ValueError(f"vagrant provider option vm_network={vm_network!r}: use nat or host-only")
    return image, image_file, server, vm_network


def _refuse_ignored(
    options: dict[str, str], *, box: str | None, build: str | None, image: str | None, server: str, port: int
) -> None:
    """``ValueError`` for an option given where it would be ignored (each value already valid)."""
    if box is not None and build is not None:
        raise ValueError(BOX_WITH_BUILD.format(build=build, box=box))
    provision = flag_option(options, "provision", "vagrant")
    if flag_option(options, "minimal", "vagrant") and not provision:
        raise ValueError(MINIMAL_WITHOUT_PROVISION)
    if provision and image is not None:
        raise ValueError(PROVISION_WITH_IMAGE)
    if options.get("vagrant_provider", "libvirt") == "virtualbox":
        for key, value in (("image", image), ("build", build)):
            if value is not None:
                raise ValueError(LIBVIRT_BOX_WITH_VIRTUALBOX.format(key=key, value=value))
        for key in ("libvirt_uri", "libvirt_driver", "storage_pool"):
            if options.get(key):
                raise ValueError(LIBVIRT_ONLY.format(key=key, value=options[key]))
        if options.get("vm_network") == "host-only":
            raise ValueError(LIBVIRT_ONLY.format(key="vm_network", value="host-only"))
    elif "host_port" in options:
        raise ValueError(HOST_PORT_WITH_LIBVIRT.format(port=options["host_port"]))
    if server == "osworld" and port != 5000:
        raise ValueError(GUEST_PORT_WITH_OSWORLD_SERVER.format(port=port))
    session = options.get("session")
    if session is not None and image is not None:
        raise ValueError(SESSION_WITH_IMAGE.format(session=session))
    if session == "gnome" and build == "minimal":
        raise ValueError(GNOME_WITHOUT_GNOME_BOX.format(what="the minimal box (build=minimal)"))
    if session == "gnome" and flag_option(options, "minimal", "vagrant"):
        raise ValueError(GNOME_WITHOUT_GNOME_BOX.format(what="provision=1 with minimal=1"))


def machine_name(worker_id: str) -> str:
    """The VM of a worker: ``osworld-gw0``, ``osworld-main``."""
    safe = re.sub(r"[^A-Za-z0-9-]", "-", worker_id).strip("-") or "main"
    return f"osworld-{safe}"


def vagrant_env(
    options: VagrantOptions,
    *,
    name: str,
    box: str,
    dotfile_dir: Path,
    console_log: Path,
    package: Path | None,
    token_file: Path | None,
    screen: tuple[int, int],
    host_port: int | None,
    base: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of every ``vagrant`` command: what ``vagrant/Vagrantfile`` reads."""
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "VAGRANT_DOTFILE_PATH": str(dotfile_dir),
            "VAGRANT_DEFAULT_PROVIDER": options.vagrant_provider,
            "VAGRANT_CHECKPOINT_DISABLE": "1",
            "VAGRANT_BOX_UPDATE_CHECK_DISABLE": "1",
            "VAGRANT_NO_COLOR": "1",
            "OSWORLD_VM_NAME": name,
            "OSWORLD_BOX": box,
            "OSWORLD_MEMORY": str(options.memory),
            "OSWORLD_CPUS": str(options.cpus),
            "OSWORLD_LIBVIRT_URI": options.libvirt_uri,
            "OSWORLD_LIBVIRT_DRIVER": options.libvirt_driver,
            "OSWORLD_STORAGE_POOL": options.storage_pool,
            "OSWORLD_CONSOLE_LOG": str(console_log),
            "OSWORLD_SCREEN": f"{screen[0]}x{screen[1]}",
            "OSWORLD_SESSION": options.session,
            "OSWORLD_GUEST_PORT": str(options.guest_port),
            "OSWORLD_PROVISION": "1" if options.provision else "0",
            "OSWORLD_MINIMAL": "1" if options.minimal else "0",
            "OSWORLD_BOOT_TIMEOUT": str(int(options.up_timeout)),
            "OSWORLD_IMAGE_SERVER": options.server if options.image else "",
            "OSWORLD_MGMT_MODE": "none" if options.vm_network == "host-only" else "nat",
        }
    )
    if options.vagrant_home is not None:
        env["VAGRANT_HOME"] = str(options.vagrant_home)
    optional = {"OSWORLD_PACKAGE": package, "OSWORLD_TOKEN_FILE": token_file, "OSWORLD_HOST_PORT": host_port}
    for key, value in optional.items():
        env.pop(key, None)
        if value is not None:
            env[key] = str(value)
    return env


def vagrant_command(netns: str | None, args: list[str], vagrant: str = "vagrant") -> list[str]:
    """A ``vagrant`` command line, run inside ``netns`` when one is given."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return [*prefix, vagrant, *args]
