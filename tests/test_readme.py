"""The README's promises that can drift: its two set-up commands, CI running the same
test command, one venv convention, and its YAML example in canonical form."""

from __future__ import annotations

import re

from conftest import REPO_ROOT

from calendar_app.editorial.fmt import canonical_text

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_the_first_lines_are_the_two_set_up_commands():
    first = re.match(r"# [^\n]+\n\n```sh\n(.*?)```", README, re.DOTALL)
    assert first, "the README must open with its set-up commands"
    serve, tests = first.group(1).splitlines()
    assert serve.endswith("python -m calendar_app serve")  # the demo calendar: no --content
    # the quick tests, then the few marked slow (pyproject.toml leaves them out by default)
    assert tests.endswith("python -m pytest -n 2 && python -m pytest -n 2 -m slow")


def test_ci_runs_the_readmes_test_command():
    readme_command = re.search(r"^.*python -m pytest -n 2 -m slow$", README, re.MULTILINE)
    ci = (REPO_ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    assert "python -m pytest -n 2" in ci and "python -m pytest -n 2 -m slow" in ci
    assert readme_command.group().split("&& ")[-2:] == ["python -m pytest -n 2 ",
                                                       "python -m pytest -n 2 -m slow"]
    assert "python -m calendar_app fmt --check content" in ci


def test_one_venv_convention_in_readme_and_docs():
    """Commands assume the activated venv; `.venv/bin/` appears only to activate it."""
    for path in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            assert ".venv/bin/" not in line.replace(". .venv/bin/activate", ""), (path, line)


def test_the_yaml_example_is_canonical():
    example = re.search(r"An event file:\n\n```yaml\n(.*?)```", README, re.DOTALL).group(1)
    path = "events/2027/jazz-night-january-2027.yaml"
    assert canonical_text("events", path, example.encode()) == example
