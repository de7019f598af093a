"""Providers of desktop environments, by name (``--provider``)."""

from __future__ import annotations

from collections.abc import Callable

from pytest_osworld.providers.base import Provider, ProviderConfig
from pytest_osworld.registry import Registry

ProviderFactory = Callable[[ProviderConfig], Provider]

#: Providers by name; ``local`` is the default.
PROVIDERS: Registry[ProviderFactory] = Registry("provider")
PROVIDERS.register("fake", "pytest_osworld.providers.fake:FakeProvider")
PROVIDERS.register("local", "pytest_osworld.providers.local:LocalProvider")
