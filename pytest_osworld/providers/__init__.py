"""Providers of desktop environments, by name (``--provider``)."""

from __future__ import annotations

from pytest_osworld.providers.base import Provider
from pytest_osworld.registry import Registry

#: Provider classes by name; ``local`` is the default.
PROVIDERS: Registry[type[Provider]] = Registry("provider")
PROVIDERS.register("fake", "pytest_osworld.providers.fake:FakeProvider")
PROVIDERS.register("local", "pytest_osworld.providers.local:LocalProvider")
PROVIDERS.register("remote", "pytest_osworld.providers.remote:RemoteProvider")
PROVIDERS.register("vagrant", "pytest_osworld.providers.vagrant:VagrantProvider")
