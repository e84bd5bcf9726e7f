"""A first run that fits a newcomer: `init`, the per-user demo calendar `serve` uses by
default, and the sample shipping inside the package."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SAMPLE, git

from calendar_app import cli
from calendar_app.store import starter
from calendar_app.store.starter import StarterError, init_calendar, serving_content


def sample_files() -> set[str]:
    return {str(p.relative_to(SAMPLE)) for p in SAMPLE.rglob("*") if p.is_file()}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("CALENDAR_CONTENT", raising=False)
    return home


def test_init_makes_a_repository_of_the_sample_in_one_commit(tmp_path):
    target = tmp_path / "cal"
    init_calendar(target)
    assert git(target, "rev-list", "--count", "HEAD").strip() == "1"
    assert set(git(target, "ls-files").split("\n")) - {""} == sample_files()
    assert git(target, "status", "--porcelain") == ""
    assert not [p for p in tmp_path.iterdir() if p.name != "cal"]  # no temp folder left


def test_init_empty_makes_a_calendar_with_settings_only(tmp_path, capsys):
    target = tmp_path / "empty"
    init_calendar(target, empty=True)
    assert git(target, "ls-files").split() == ["calendar.yaml"]
    assert git(target, "rev-list", "--count", "HEAD").strip() == "1"
    assert cli.main(["check", "--strict", str(target)]) == 0, capsys.readouterr().out


def test_init_refuses_a_folder_with_files(tmp_path, capsys):
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    assert cli.main(["init", str(target)]) == 1
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_init_accepts_an_empty_folder(tmp_path, capsys):
    target = tmp_path / "ready"
    target.mkdir()
    assert cli.main(["init", "--empty", str(target)]) == 0
    assert (target / "calendar.yaml").is_file() and (target / ".git").is_dir()


def test_serve_default_makes_the_demo_once_then_reuses_it(home):
    demo, made = serving_content(None)
    assert made and demo == home / ".local/share/calendar-app/demo"
    assert git(demo, "rev-list", "--count", "HEAD").strip() == "1"
    (demo / "mine.txt").write_text("an edit of the user's")
    again, made_again = serving_content(None)
    assert again == demo and not made_again
    assert (demo / "mine.txt").read_text() == "an edit of the user's"


def test_demo_follows_xdg_data_home(home, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert serving_content(None)[0] == tmp_path / "data/calendar-app/demo"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # ignored, as the spec says
    assert starter.demo_dir() == home / ".local/share/calendar-app/demo"


def test_explicit_content_wins_and_makes_no_demo(home, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    assert serving_content(mine) == (mine, False)
    monkeypatch.setenv("CALENDAR_CONTENT", str(mine))
    assert serving_content(None) == (mine, False)
    assert not (home / ".local").exists()


def test_the_bundled_sample_is_never_served(home):
    with pytest.raises(StarterError, match="init"):
        serving_content(starter.BUNDLED_CONTENT)


def test_serve_says_where_the_calendar_is_and_how_to_stop(home, capsys, monkeypatch):
    served = []

    class Server:  # what `serve` runs: bound, then served until Ctrl-C
        def serve_forever(self) -> None:
            served.append("served")

        def server_close(self) -> None:
            served.append("closed")

    def make_server(host: str, port: int, app: object, **kw: object) -> Server:
        served.append((host, port))
        return Server()

    monkeypatch.setattr("werkzeug.serving.make_server", make_server)
    assert cli.main(["serve", "--users", str(home / "users.yaml"), "--port", "8123"]) == 0
    out = capsys.readouterr().out
    demo = home / ".local/share/calendar-app/demo"
    assert str(demo) in out and "Made a demo calendar" in out
    assert "http://127.0.0.1:8123/wp-json/tribe/events/v1/" in out
    assert "Press Ctrl-C to stop" in out
    assert served == [("127.0.0.1", 8123), "served", "closed"]
    assert git(REPO_ROOT, "status", "--porcelain", "--", "content") == ""


def test_the_sample_ships_as_package_data():
    """pyproject lists packages by hand (content/ maps to calendar_app.sample): every
    package and every sample file must be in the wheel."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {".".join(p.relative_to(REPO_ROOT).parent.parts)
                for p in (REPO_ROOT / "calendar_app").rglob("__init__.py")}
    assert set(config["packages"]) == packages | {"calendar_app.sample"}
    assert config["package-dir"]["calendar_app.sample"] == "content"
    # setuptools expands package-data with glob.glob, which leaves dotfiles to explicit names
    patterns = config["package-data"]["calendar_app.sample"]
    shipped = {f for p in patterns for f in glob.glob(p, root_dir=SAMPLE)}
    assert sample_files() <= shipped
