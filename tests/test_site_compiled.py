"""Compiled templates kept between builds (render.CompiledTemplates): a warm builder
compiles nothing, an edited template is compiled again, a damaged or missing folder
costs a compile, never a build."""

from __future__ import annotations

import shutil
from pathlib import Path

import jinja2
import pytest
from conftest import _app_config, make_repo, sign_in, site_options
from sitebuilds import small_sample

from calendar_app.http.app import create_app
from calendar_app.site import Builder

LOST = "{% extends 'base.html' %}{% block main %}<h1>Lost</h1>{% endblock %}"
GONE = "{% extends 'base.html' %}{% block main %}<h1>Gone</h1>{% endblock %}"
COMPILE = jinja2.Environment.compile  # Jinja's own, whatever a test patched in


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_sample(tmp_path_factory.mktemp("compiled") / "content")


def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates Jinja compiles from source from now on."""
    names: list[str] = []

    def counting(env, source, name=None, filename=None, raw=False, defer_init=False):
        names.append(name)
        return COMPILE(env, source, name, filename, raw, defer_init)
    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    return names


def build(content: Path, root: Path, compiled: Path | None, monkeypatch: pytest.MonkeyPatch,
          **extra) -> list[str]:
    """A build of `content` in one process into root/public (cache root/cache); the
    names of the templates Jinja compiled from source for it."""
    compiled_names = compiles(monkeypatch)
    options = site_options(content, root / "public", root / "cache", **extra)
    options.compiled_templates = compiled
    builder = Builder(options)
    builder.workers = 1
    try:
        report = builder.build()
    finally:
        builder.close()
    assert report.written and not report.problems, report.problems
    return compiled_names


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != ".build-manifest"}


@pytest.fixture(scope="module")
def cold(content: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A cold build (an empty folder of compiled templates): its folder (outputs in
    public/, compiled templates in compiled/) and the templates it compiled."""
    root = tmp_path_factory.mktemp("cold")
    with pytest.MonkeyPatch.context() as monkeypatch:
        names = build(content, root, root / "compiled", monkeypatch)
    return root, names


def compiled_copy(cold: tuple[Path, list[str]], tmp_path: Path) -> Path:
    shutil.copytree(cold[0] / "compiled", tmp_path / "compiled")
    return tmp_path / "compiled"


def test_cold_then_warm_compiles_each_template_once(
        content: Path, cold: tuple[Path, list[str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root, names = cold
    assert {"base.html", "event.html", "list.html", "month.html"} <= set(names)
    assert len(names) == len(set(names)) == len(list((root / "compiled").iterdir()))
    # Another builder, its own cache and output folders, the same compiled templates.
    assert build(content, tmp_path, compiled_copy(cold, tmp_path), monkeypatch) == []
    assert tree(tmp_path / "public") == tree(root / "public")


def test_default_folder_is_in_the_cache_folder(content: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Production builds keep them beside their other caches: a second build from the
    same cache folder (into a new output folder) compiles nothing."""
    assert build(content, tmp_path, None, monkeypatch)
    assert list((tmp_path / "cache/site-templates").glob("site-*.jinja"))
    (tmp_path / "public").rename(tmp_path / "first")
    assert build(content, tmp_path, None, monkeypatch) == []


def test_an_edited_template_is_compiled_again(content: Path, tmp_path: Path,
                                              cold: tuple[Path, list[str]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "404.html").write_text(LOST, encoding="utf-8")
    compiled = compiled_copy(cold, tmp_path)
    assert build(content, tmp_path / "one", compiled, monkeypatch, templates=mine) == [
        "404.html"]  # the user's, found first; ours are compiled already
    assert "<h1>Lost</h1>" in (tmp_path / "one/public/404.html").read_text(encoding="utf-8")
    (mine / "404.html").write_text(GONE, encoding="utf-8")  # same name, size and folder
    again = build(content, tmp_path / "two", compiled, monkeypatch, templates=mine)
    assert again == ["404.html"]
    assert "<h1>Gone</h1>" in (tmp_path / "two/public/404.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_damaged_compiled_templates_are_compiled_again(
        content: Path, cold: tuple[Path, list[str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, damage: bytes | None) -> None:
    """Cut short, overwritten with junk past their header, or the folder a file: the
    build is the same, every template compiled from its source."""
    compiled = compiled_copy(cold, tmp_path)
    if damage is None:
        shutil.rmtree(compiled)
        compiled.write_bytes(b"not a folder")
    else:
        for found in compiled.iterdir():
            found.write_bytes(found.read_bytes()[:40] + damage)
    assert sorted(build(content, tmp_path, compiled, monkeypatch)) == sorted(cold[1])
    assert tree(tmp_path / "public") == tree(cold[0] / "public")


def test_editing_pages_compile_once_per_folder(tmp_path: Path, signed_users: dict,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The editing pages' environment (Flask's) keeps its compiled templates too: a
    second app over the same folder shows the same page compiling nothing; by default
    the folder is in the app's cache folder."""
    compiled_names = compiles(monkeypatch)
    repo = make_repo(tmp_path)

    def page(base: Path, folder: Path | None) -> bytes:
        base.mkdir()
        config = {**_app_config(repo, base), "COMPILED_TEMPLATES": folder,
                  "USERS_FILE": str(tmp_path / "users.yaml")}  # signed_users'
        client = create_app(config).test_client()
        assert sign_in(client, "editor").status_code == 303
        answer = client.get("/admin/events/new")
        assert answer.status_code == 200
        return answer.data

    first = page(tmp_path / "one", tmp_path / "compiled")
    assert {"admin/base.html", "admin/edit.html"} <= set(compiled_names)
    assert sorted(p.name[:8] for p in (tmp_path / "compiled").iterdir()) == \
        ["editing-"] * len(compiled_names)
    compiled_names.clear()
    assert page(tmp_path / "two", tmp_path / "compiled").count(b"<form") == \
        first.count(b"<form")
    assert compiled_names == []
    page(tmp_path / "three", None)  # the default: beside the app's other caches
    assert list((tmp_path / "three/cache/editing-templates").glob("editing-*.jinja"))
