"""Where the user config and the chat history live, on real folders."""

import sys

import pytest

from hephaistus.settings import userdirs
from hephaistus.settings.config import user_config_path
from hephaistus.ui.repl import history_path


def test_the_xdg_variables_win_everywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert user_config_path() == tmp_path / "cfg" / "hephaistus" / "config.toml"
    assert history_path() == tmp_path / "state" / "hephaistus" / "history"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux folders")
def test_linux_keeps_the_xdg_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_config_path() == tmp_path / ".config" / "hephaistus" / "config.toml"
    assert history_path() == tmp_path / ".local" / "state" / "hephaistus" / "history"


def test_the_platform_folder_unless_only_an_earlier_one_exists(tmp_path):
    platform, legacy = tmp_path / "Library" / "hephaistus", tmp_path / ".config" / "hephaistus"
    assert userdirs.chosen(None, platform, legacy) == platform  # a new user
    legacy.mkdir(parents=True)
    assert userdirs.chosen(None, platform, legacy) == legacy  # it keeps working
    platform.mkdir(parents=True)
    assert userdirs.chosen(None, platform, legacy) == platform  # once both exist
    assert userdirs.chosen(str(tmp_path / "x"), platform, legacy) == tmp_path / "x" / "hephaistus"
