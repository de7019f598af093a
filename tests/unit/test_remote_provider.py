from __future__ import annotations

from pathlib import Path

import pytest

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.remote import POOL_AND_URLS, RemoteDesktop, RemoteProvider, parse_pool


def test_pool_file_lines() -> None:
    pool = parse_pool("# desktops\nhttp://10.0.0.5:5000 secret\nhttp://vm2:5000   # an OSWorld VM\n\n")
    assert pool == [RemoteDesktop("http://10.0.0.5:5000", "secret"), RemoteDesktop("http://vm2:5000", None)]


def test_inline_urls() -> None:
    pool = parse_pool("http://a:1#tok, http://b:2", separator=",")
    assert pool == [RemoteDesktop("http://a:1", "tok"), RemoteDesktop("http://b:2", None)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "needs pool=FILE or urls="),
        ({"urls": "ftp://x"}, "is not an http://host:port URL"),
        ({"urls": " , "}, "the remote pool is empty"),
        ({"urls": "http://a:1", "colour": "red"}, "unknown remote provider option"),
        ({"pool": "/nonexistent/pool.txt"}, "cannot read the remote pool file"),
        ({"urls": "http://a:1", "allow_no_reset": "sometimes"}, "allow_no_reset='sometimes': use 1 or 0"),
    ],
)
def test_bad_options(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        RemoteProvider.check_options(options)


def test_pool_and_urls_together_are_refused(tmp_path: Path) -> None:
    """With both, urls would be ignored: a ValueError (a usage error) saying to give one."""
    pool = tmp_path / "pool.txt"
    pool.write_text("http://a:1\n")
    with pytest.raises(ValueError) as caught:
        RemoteProvider.check_options({"pool": str(pool), "urls": "http://b:2"})
    assert str(caught.value) == POOL_AND_URLS
    RemoteProvider.check_options({"pool": str(pool)})
    RemoteProvider.check_options({"urls": "http://b:2"})


def test_network_is_the_desktops_own() -> None:
    """No shared ``network=`` (refused); live pages are not skipped on these desktops."""
    assert RemoteProvider.network_modes == ()
    assert "whatever the pool's desktops have" in RemoteProvider.network_instead
    provider = RemoteProvider(ProviderConfig(worker_id="gw0", options={"urls": "http://a:1"}))
    assert provider.live_network


def test_network_true_in_the_python_api_is_refused_too() -> None:
    """The envs' ``network=True`` is ``network=shared``: refused where it would be ignored."""
    from pytest_osworld.env.engine import NETWORK_IGNORED, EngineConfig, EnvError, EpisodeEngine

    config = EngineConfig(provider="remote", provider_options={"urls": "http://a:1"}, network=True)
    with pytest.raises(EnvError) as caught:
        EpisodeEngine(config)
    assert str(caught.value) == NETWORK_IGNORED.format(
        provider="remote", instead=RemoteProvider.network_instead
    )


def test_refused_without_opting_in_to_no_reset(tmp_path: Path) -> None:
    provider = RemoteProvider(
        ProviderConfig(worker_id="gw0", options={"urls": "http://a:1", "lock_dir": str(tmp_path)})
    )
    with pytest.raises(EnvironmentFailure, match="cannot restore these desktops to a snapshot"):
        provider.start()


def test_each_worker_claims_its_own_desktop(tmp_path: Path) -> None:
    options = {"urls": "http://a:1,http://b:2", "allow_no_reset": "1", "lock_dir": str(tmp_path)}
    first = RemoteProvider(ProviderConfig(worker_id="gw0", options=options))
    second = RemoteProvider(ProviderConfig(worker_id="gw1", options=options))
    third = RemoteProvider(ProviderConfig(worker_id="gw2", options=options))
    first.start()
    second.start()
    assert {first.desktop.url, second.desktop.url} == {"http://a:1", "http://b:2"}
    with pytest.raises(EnvironmentFailure, match="all 2 remote desktops are claimed"):
        third.start()
    first.stop()
    third.start()
    assert third.desktop.url == "http://a:1"
