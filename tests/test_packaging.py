"""Start-up stays light, the package has no import-time side effects, prompts ship inside it."""

import subprocess
import sys
from importlib import resources
from pathlib import Path

from conftest import heph_command


def modules_loaded_by(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint('MODULES:' + ' '.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    return set(done.stdout.rpartition("MODULES:")[2].split())


def test_version_and_help_do_not_import_heavy_modules():
    for argv in (["--version"], ["--help"], ["sessions", "--help"]):
        loaded = modules_loaded_by(
            f"from hephaistus.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
        )
        assert "hephaistus.cli" in loaded
        for heavy in ("openai", "git", "prompt_toolkit", "rich", "httpx2", "httpx"):
            assert heavy not in loaded, (argv, heavy)


def test_importing_the_package_has_no_side_effects(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import hephaistus, hephaistus.cli, hephaistus.engine.agent, "
            "hephaistus.engine, hephaistus.tools, hephaistus.records.session",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


def test_version_command():
    done = subprocess.run([*heph_command(), "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("heph ")


def test_prompt_templates_load_from_the_package():
    template = resources.files("hephaistus.prompts").joinpath("system.md")
    text = template.read_text(encoding="utf-8")
    assert "{{tools}}" in text and '"final"' in text


def test_python_dash_m_runs_the_cli():
    done = subprocess.run(
        [sys.executable, "-m", "hephaistus", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("heph ")


def test_every_subpackage_is_packaged():
    import sys
    from pathlib import Path

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    root = Path(__file__).resolve().parents[1]
    listed = set(
        tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(root).parts)
        for init in (root / "hephaistus").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject.toml packages: {sorted(found - listed)}"


def test_no_module_is_over_400_lines():
    package = Path(__file__).parent.parent / "hephaistus"
    long = {
        str(module.relative_to(package)): lines
        for module in package.rglob("*.py")
        if (lines := len(module.read_text().splitlines())) > 400
    }
    assert long == {}


# Projects on PyPI that are not this one: an install line naming them installs someone else's.
TAKEN_ON_PYPI = ("hephaistus", "heph")


def test_the_distribution_and_every_install_line_name_no_one_elses_project():
    import re

    root = Path(__file__).resolve().parent.parent
    project = re.search(r'^name = "(.+)"$', (root / "pyproject.toml").read_text(), re.M)
    assert project is not None and project[1].lower() not in TAKEN_ON_PYPI
    taken = "|".join(TAKEN_ON_PYPI)
    installs_theirs = re.compile(rf"pip install\s+['\"]?({taken})(\[|['\"`\s]|$)", re.I)
    texts = [root / "README.md", *root.glob("hephaistus/**/*.py"), *root.glob("benchmarks/*.py")]
    for path in texts:
        for line in path.read_text(encoding="utf-8").splitlines():
            assert not installs_theirs.search(line), (path.name, line)
