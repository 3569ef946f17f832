import pytest

from hephaistus.config import Config, find_workspace, is_loopback_url, load_config
from hephaistus.errors import ConfigError


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "hephaistus"
    folder.mkdir(parents=True)
    return folder


def test_precedence_flags_env_workspace_user_defaults(tmp_path, user_home):
    (user_home / "config.toml").write_text(
        'model = "user"\nmax_steps = 5\ntimeout = 9\nstream = true\n'
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hephaistus]\nmodel = "pyproject"\nmax_steps = 6\n'
    )
    (tmp_path / ".heph.toml").write_text('model = "heph-toml"\n')
    config = load_config(tmp_path, {}, {})
    assert (config.model, config.max_steps, config.timeout, config.stream) == (
        "heph-toml",
        6,
        9,
        True,
    )
    config = load_config(tmp_path, {}, {"HEPH_MODEL": "env", "HEPH_MAX_STEPS": "7"})
    assert (config.model, config.max_steps) == ("env", 7)
    config = load_config(tmp_path, {"model": "flag", "max_steps": None}, {"HEPH_MODEL": "env"})
    assert (config.model, config.max_steps) == ("flag", 6)
    assert load_config(tmp_path / "nowhere", {}, {}).model == "user"


def test_defaults(tmp_path, user_home):
    config = load_config(tmp_path, {}, {})
    assert config == Config()
    assert config.max_steps == 20 and config.observation_limit == 16_000


def test_unknown_key_names_file_and_key(tmp_path, user_home):
    (tmp_path / ".heph.toml").write_text('modle = "x"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, {}, {})
    assert str(tmp_path / ".heph.toml") in caught.value.message
    assert "unknown key 'modle'" in caught.value.message


def test_unknown_key_in_pyproject_table(tmp_path, user_home):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.hephaistus]\nbogus = 1\n'
    )
    with pytest.raises(
        ConfigError, match=r"pyproject.toml \[tool.hephaistus\]: unknown key 'bogus'"
    ):
        load_config(tmp_path, {}, {})


@pytest.mark.parametrize(
    "text, words",
    [
        ('max_steps = "ten"', "'max_steps' must be a whole number"),
        ("max_steps = 0", "greater than 0"),
        ("stream = 1", "'stream' must be true or false"),
        ("model = [", "not valid TOML"),
        ('api_key = "sk-x"', "unknown key 'api_key'"),
    ],
)
def test_bad_values_are_errors(tmp_path, user_home, text, words):
    (tmp_path / ".heph.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=words):
        load_config(tmp_path, {}, {})


def test_bad_environment_value_names_the_variable(tmp_path, user_home):
    with pytest.raises(ConfigError, match="HEPH_MAX_STEPS"):
        load_config(tmp_path, {}, {"HEPH_MAX_STEPS": "lots"})


def test_user_config_errors_name_the_user_file(tmp_path, user_home):
    (user_home / "config.toml").write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match=str(user_home / "config.toml")):
        load_config(tmp_path, {}, {})


@pytest.mark.parametrize(
    "url, local",
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8080/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        (None, False),
        ("http://10.0.0.5:8000/v1", False),
    ],
)
def test_loopback_urls_get_a_placeholder_key(url, local):
    assert is_loopback_url(url) is local
    assert (Config(base_url=url).resolved_api_key() == "heph-local") is local


def test_workspace_is_the_git_top_level(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find_workspace(tmp_path / "a" / "b") == tmp_path.resolve()


def test_docs_table_in_pyproject_and_heph_toml(tmp_path, user_home):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.hephaistus.docs]\ninclude_private = true\nignore = ["gen/*"]\n'
    )
    (tmp_path / ".heph.toml").write_text('[docs]\nstyle = "numpy"\n')
    docs = load_config(tmp_path, {}, {}).docs
    assert (docs.include_private, docs.ignore, docs.style) == (True, ("gen/*",), "numpy")


@pytest.mark.parametrize(
    "text, words",
    [
        ("[docs]\nstyle = 'fancy'\n", "'style' must be one of"),
        ("[docs]\nignore = 'x'\n", "list of glob patterns"),
        ("[docs]\nincluded = true\n", "unknown key 'included'"),
        ("docs = 3\n", "expected a table"),
    ],
)
def test_bad_docs_settings(tmp_path, user_home, text, words):
    (tmp_path / ".heph.toml").write_text(text)
    with pytest.raises(ConfigError, match=words):
        load_config(tmp_path, {}, {})


def test_pass_env_is_a_list_of_names(tmp_path, user_home):
    (tmp_path / ".heph.toml").write_text('pass_env = ["DJANGO_*", "NODE_ENV"]\n')
    assert load_config(tmp_path, {}, {}).pass_env == ("DJANGO_*", "NODE_ENV")
    (tmp_path / ".heph.toml").write_text('pass_env = "DJANGO_*"\n')
    with pytest.raises(ConfigError, match="'pass_env' must be a list of strings"):
        load_config(tmp_path, {}, {})
