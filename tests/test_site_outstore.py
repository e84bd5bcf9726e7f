"""Outputs kept by signature in the cache folder (site/outstore.py): a full build into
an empty folder links them instead of rendering; the store never holds other bytes
than its index says, whatever the builds before and whatever was done to it."""

from __future__ import annotations

import errno
import hashlib
import os
import pickle
import shutil
from pathlib import Path

import pytest
import sitebuilds
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from calendar_app.site import Builder, build
from calendar_app.site import outstore as outstore_module
from tests.test_site_build import make_options, tree_bytes

REPO = Path(__file__).resolve().parent.parent
EVENT = "events/2026/holiday-messiah-sing-along-2026.yaml"


def store_of(tmp: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp / "cache" / "site-outputs"
    index = pickle.loads((tmp / "cache" / "site-outputs.pickle").read_bytes())
    return folder, index


def assert_store_consistent(tmp: Path) -> None:
    """Every indexed file holds the bytes of its digest; nothing else is stored."""
    folder, index = store_of(tmp)
    assert {p.name for p in folder.iterdir()} == set(index)
    for sig, digest in index.items():
        assert hashlib.sha256((folder / sig).read_bytes()).hexdigest()[:32] == digest


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample site built once per run (sitebuilds.sample_site, the options
    make_options gives), read only: outputs in cold/public, its caches in cold/cache,
    content in cold/content."""
    return sitebuilds.sample_site(tmp_path_factory).parent


def test_cold_build_stores_every_output(cold: Path) -> None:
    folder, index = store_of(cold)
    manifest = (cold / "public" / ".build-manifest").read_text().splitlines()[1:]
    entries = {line.split("\t")[0]: line.split("\t")[1:] for line in manifest}
    assert {sig for sig, _ in entries.values()} == set(index)
    for path, (sig, digest) in entries.items():
        assert index[sig] == digest
        assert os.path.samefile(cold / "public" / path, folder / sig)  # a link, no copy
    assert_store_consistent(cold)


def test_warm_build_links_instead_of_rendering(cold: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(cold / "cache", tmp_path / "cache")
    shutil.copytree(cold / "content", tmp_path / "content")

    def no_rendering(*_args: object) -> bytes:
        raise AssertionError("rendered although stored")
    monkeypatch.setattr("calendar_app.site.pages.Pages.render", no_rendering)
    monkeypatch.setattr("calendar_app.model.markup.render_html", no_rendering)
    builder = Builder(make_options(tmp_path / "content", tmp_path / "warm", tmp_path))
    try:
        report = builder.build()
    finally:
        builder.close()
    assert not report.warnings and not report.problems
    assert tree_bytes(tmp_path / "warm") == tree_bytes(cold / "public")
    assert len(report.written) == len(tree_bytes(cold / "public"))
    folder, index = store_of(tmp_path)
    page = tmp_path / "warm" / "index.html"
    assert any(os.path.samefile(page, folder / sig) for sig in index)
    assert (tmp_path / "warm" / ".build-manifest").read_text() == (
        cold / "public" / ".build-manifest").read_text()


def test_missing_stored_files_are_rendered(cold: Path, tmp_path: Path) -> None:
    shutil.copytree(cold / "cache", tmp_path / "cache")
    shutil.copytree(cold / "content", tmp_path / "content")
    folder, index = store_of(tmp_path)
    gone = sorted(index)[::3]
    for sig in gone:
        (folder / sig).unlink()
    report = build(make_options(tmp_path / "content", tmp_path / "warm", tmp_path))
    assert not report.problems
    assert tree_bytes(tmp_path / "warm") == tree_bytes(cold / "public")
    assert_store_consistent(tmp_path)  # the rendered ones were stored again


def test_edits_in_place_and_warm_builds_keep_the_store_true(cold: Path, tmp_path: Path) -> None:
    """An edit rebuilt into the same folder replaces outputs by rename: the stored
    files of the old signatures keep their bytes, and the full build drops them."""
    shutil.copytree(cold / "cache", tmp_path / "cache")
    shutil.copytree(cold / "content", tmp_path / "content")
    shutil.copytree(cold / "public", tmp_path / "site", copy_function=os.link)
    event = tmp_path / "content" / EVENT
    event.write_text(event.read_text().replace("title: ", "title: Edited ", 1))
    _, before = store_of(tmp_path)
    report = build(make_options(tmp_path / "content", tmp_path / "site", tmp_path))
    assert report.written and not report.problems
    _, after = store_of(tmp_path)
    assert before.keys() - after.keys()  # the old signatures were dropped
    assert_store_consistent(tmp_path)
    assert tree_bytes(cold / "public") != tree_bytes(tmp_path / "site")
    # A build into an empty folder: the edited site, from the store.
    build(make_options(tmp_path / "content", tmp_path / "warm", tmp_path))
    assert tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "site")
    assert_store_consistent(tmp_path)


def test_no_hard_links_no_store(cold: Path, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Another file system (EXDEV): the site is built as without a store."""
    shutil.copytree(cold / "content", tmp_path / "content")
    real = os.link
    calls = []

    def refusing(source: str, target: str) -> None:
        if "site-outputs" in str(target):
            calls.append(target)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real(source, target)
    monkeypatch.setattr(outstore_module.os, "link", refusing)
    report = build(make_options(tmp_path / "content", tmp_path / "site", tmp_path))
    assert not report.problems
    assert tree_bytes(tmp_path / "site") == tree_bytes(cold / "public")
    assert len(calls) == 1  # the first refusal turns the store off
    assert not (tmp_path / "cache" / "site-outputs.pickle").exists()


# Cheap by default, full under slow (tests/README.md): the default form runs the two
# explicit damages, which between them take every branch (files gone and a stale file
# beside an index that is read, then an index that is not); the full one adds
# generated mixes.
UNREAD = [(0, "unlink"), (5, "unlink"), (7, "unindexed")]
GARBLED = [(3, "unlink"), (2, "index-garbage")]
DAMAGE = st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(
    ["unlink", "unindexed", "index-garbage"])), max_size=4)


@pytest.mark.parametrize("size", [0, pytest.param(6, marks=pytest.mark.slow)])
def test_damaged_store_never_changes_the_site(cold: Path, tmp_path_factory: pytest.TempPathFactory,
                                              size: int) -> None:
    """Whatever is removed from the store, or left in it, or done to its index: the
    site has the cold build's bytes (a damaged index is read as an empty store)."""
    @settings(max_examples=max(size, 1), deadline=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate] if size else [Phase.explicit],
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(damage=DAMAGE)
    @example(damage=UNREAD)
    @example(damage=GARBLED)
    def damaged(damage: list[tuple[int, str]]) -> None:
        tmp = tmp_path_factory.mktemp("damaged")
        shutil.copytree(cold / "cache", tmp / "cache")
        folder, index = store_of(tmp)
        sigs = sorted(index)
        for n, kind in damage:
            sig = sigs[n % len(sigs)]
            if kind == "unlink":
                (folder / sig).unlink(missing_ok=True)
            elif kind == "unindexed":  # a file a stopped build left and never indexed
                (folder / f"{n:032x}").write_bytes(b"stale")
            else:
                (tmp / "cache" / "site-outputs.pickle").write_bytes(b"\x80\x05garbage")
        report = build(make_options(cold / "content", tmp / "site", tmp))
        assert not report.problems
        assert tree_bytes(tmp / "site") == tree_bytes(cold / "public")
    damaged()
