"""Fixtures shared by the core's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from numerix import plugins
from numerix.configuration import _state as config_state


@pytest.fixture
def core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """numerix as installed with core and binary alone: every other backend plugin
    (numerix-xla, numerix-torch, a third party's such as the example backend) is hidden,
    so that "not installed" behaviour is tested the same way whatever else is installed
    in this environment."""
    reg = plugins._REG
    reg.discover()
    plugins.settings_models()
    hidden = {k for k in reg.entries if k != "binary"}
    monkeypatch.setattr(reg, "entries", {k: v for k, v in reg.entries.items() if k not in hidden})
    monkeypatch.setattr(reg, "classes", {k: v for k, v in reg.classes.items() if k not in hidden})
    monkeypatch.setattr(
        reg, "instances", {k: v for k, v in reg.instances.items() if k[0] not in hidden}
    )
    monkeypatch.setattr(
        reg, "settings", {k: v for k, v in (reg.settings or {}).items() if k not in hidden}
    )
    _forget_settings()
    yield
    monkeypatch.undo()
    _forget_settings()


def _forget_settings() -> None:
    # the next read of the settings sees the plugins (and environment) as they are then
    config_state.base = None
    config_state.base_backend = None


@pytest.fixture(autouse=True)
def _wide_cli_output(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI honours COLUMNS, which pytest-xdist's workers set to 80: its tables would
    # fold their cells there and not in a single process. Unset, captured output is 132
    # columns wide (numerix.cli._console), the same everywhere.
    monkeypatch.delenv("COLUMNS", raising=False)
