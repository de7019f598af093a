"""Pure parts of the local provider: options, the bwrap command line, passwd files."""

from __future__ import annotations

import pytest

from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import (
    DESKTOP_DIR,
    LocalOptions,
    LocalProvider,
    bwrap_argv,
    passwd_files,
    sandbox_env,
    template_key,
)


def test_options_defaults_and_parsing(tmp_path):
    options = LocalOptions.parse(
        {"cache_dir": str(tmp_path), "ready_timeout": "12.5", "rebuild_template": "yes"}
    )
    assert options.cache_dir == tmp_path
    assert options.ready_timeout == 12.5
    assert options.rebuild_template is True
    assert LocalOptions.parse({}).ready_timeout == 60.0
    assert LocalOptions.parse({}).session == "gnome"
    assert LocalOptions.parse({"session": "openbox"}).session == "openbox"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ready_timeout": "soon"}, "ready_timeout='soon': not a number"),
        ({"template_timeout": "0"}, "template_timeout='0': must be positive"),
        ({"colour": "blue"}, "unknown local provider option(s): colour"),
        ({"session": "kde"}, "session='kde': use one of gnome, openbox"),
        ({"rebuild_template": "maybe"}, "local provider option rebuild_template='maybe': use 1 or 0"),
    ],
)
def test_bad_options_name_the_option(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        LocalOptions.parse(options)


def _argv(network: bool, home: str | None = None) -> list[str]:
    return bwrap_argv(
        ctl_dir="/h/ctl",
        home=home,
        template="/h/tpl",
        network=network,
        env={"HOME": "/home/user"},
        etc_dir="/h/etc",
        command=["/bin/bash", "s.sh"],
    )


def test_bwrap_isolates_by_default():
    argv = _argv(network=False)
    for flag in (
        "--unshare-net",
        "--unshare-pid",
        "--unshare-user",
        "--die-with-parent",
        "--clearenv",
        "--new-session",
    ):
        assert flag in argv
    assert argv[argv.index("--uid") + 1] == "1000"
    assert argv[argv.index("/home") - 1 : argv.index("/home") + 1] == ["--tmpfs", "/home"]
    assert argv[argv.index("/h/ctl") - 1 : argv.index("/h/ctl") + 2] == [
        "--bind",
        "/h/ctl",
        "/run/osworld/ctl",
    ]
    assert argv[-2:] == ["/bin/bash", "s.sh"]


def test_shared_network_mode_keeps_the_host_network():
    assert "--unshare-net" not in _argv(network=True)


def test_template_build_binds_the_home():
    argv = _argv(network=False, home="/h/staging")
    assert argv[argv.index("/h/staging") - 1 : argv.index("/h/staging") + 2] == [
        "--bind",
        "/h/staging",
        "/home/user",
    ]


def test_passwd_has_user_1000_once():
    passwd, group = passwd_files()
    entries = [line for line in passwd.splitlines() if line.split(":")[2] == "1000"]
    assert entries == ["user:x:1000:1000:user:/home/user:/bin/bash"]
    assert "user:x:1000:" in group.splitlines()


def test_sandbox_env_puts_the_wrappers_first():
    env = sandbox_env("/venv/bin/python", (1920, 1080), with_template=True)
    assert env["PATH"].split(":")[0] == str(DESKTOP_DIR / "bin")
    assert env["SAL_USE_VCLPLUGIN"] == "gtk3"
    assert env["OSWORLD_SCREEN"] == "1920x1080"
    assert env["OSWORLD_TEMPLATE"] == "/run/osworld/template"
    assert "OSWORLD_TEMPLATE" not in sandbox_env("/p", (800, 600), with_template=False)


def test_support_files_exist_and_are_executable():
    for name in (
        "session.sh",
        "build_template.sh",
        "bin/google-chrome",
        "bin/python",
        "bin/python3",
        "bin/sudo",
    ):
        path = DESKTOP_DIR / name
        assert path.is_file(), name
        assert path.stat().st_mode & 0o111, name
    assert len(template_key()) == 16


def test_the_top_bar_clock_is_the_gnome_sessions(tmp_path):
    """A budget replay leaves the clock out on the gnome session's screens; openbox has no panel."""

    def clock(**options: str) -> bool:
        config = ProviderConfig(worker_id="gw0", options={"cache_dir": str(tmp_path), **options})
        return LocalProvider(config).top_bar_clock

    assert clock()
    assert not clock(session="openbox")


def test_describe_and_restore_before_start(tmp_path):
    provider = LocalProvider(ProviderConfig(worker_id="gw0", options={"cache_dir": str(tmp_path)}))
    assert provider.describe() == "local (bubblewrap + Xvfb 1920x1080, gnome session, no network)"
    from pytest_osworld.errors import EnvironmentFailure

    with pytest.raises(EnvironmentFailure, match="restore\\(\\) called before start\\(\\)"):
        provider.restore("init_state")
