"""Shared fixtures: an isolated app per test over a temporary git content tree."""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime as dt
import functools
import gc
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sitechecks import with_axe

from calendar_app.http.app import create_app
from calendar_app.site import Options, build
from calendar_app.store.users import ROLES, UserStore
from calendar_app.wiring import open_calendar

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE = REPO_ROOT / "content"
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)
BASE = "/wp-json/tribe/events/v1"
# The id the sample calendar hands out next: one above every id its files hold.
SAMPLE_NEXT_ID = 1 + max(
    int(found) for path in SAMPLE.rglob("*.yaml")
    for found in re.findall(r"^id: (\d+)$", path.read_text(), re.MULTILINE))
# A hand-written event file the editorial and hardening tests vary.
CRAFTED_EVENT = """\
id: 900
title: Crafted
slug: crafted
start_date: 2027-05-01 19:00:00
end_date: 2027-05-01 21:00:00
venue: the-blue-lantern
"""


# A RAM-backed folder for the suite's scratch files (see pytest_configure).
RAM_DISK = Path("/dev/shm")
RAM_DISK_FREE_NEEDED = 4 << 30


def pytest_configure(config: pytest.Config) -> None:
    """The suite makes, fsyncs and removes a few hundred thousand small files (git
    repositories, caches, built sites): on a disk that is most of its wall time, and
    nothing it checks needs a platter (the crash tests kill processes; the page cache
    survives that). So where the machine offers a RAM disk, writable, executable and
    with room, the run's temporary folders go there. An explicit TMPDIR or --basetemp
    wins; xdist's workers inherit the choice through the environment."""
    _cache_rewritten_tests()
    if hasattr(config, "workerinput") or config.option.basetemp or "TMPDIR" in os.environ:
        return
    try:
        stats = os.statvfs(RAM_DISK)
    except OSError:
        return
    roomy = stats.f_bavail * stats.f_frsize >= RAM_DISK_FREE_NEEDED
    if roomy and not stats.f_flag & os.ST_NOEXEC and os.access(RAM_DISK, os.W_OK | os.X_OK):
        os.environ["TMPDIR"] = str(RAM_DISK)
        tempfile.tempdir = None  # forget the folder tempfile already chose


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive once the tests are collected (the imported modules, the test
    functions and their parameters: ~350,000 objects) lives until the end: frozen, the
    collector's full passes stop walking it each time (they took up to half a second
    each, a tenth of a test process's CPU went to the collector). A rarer young
    collection as well: a test makes a few hundred thousand short-lived objects."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(5_000, 10, 10)


def _cache_rewritten_tests() -> None:
    """pytest keeps the assertion-rewritten test modules in __pycache__ only where Python
    may write bytecode. Where PYTHONDONTWRITEBYTECODE is set, every worker rewrote all
    ~150 test modules at every run (~10 s of CPU each, ~14 s of the run's wall time); the
    cache is pytest's own and ignored by git, so the suite keeps it regardless.
    The same for the interpreters the suite starts (xdist's workers, the CLI, gunicorn,
    the import checks: a hundred or so): without the variable they keep the project's
    bytecode too, instead of compiling its ~150 modules from source each (~0.2 s CPU)."""
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _share_url_builders() -> None:
    """Each app compiles a Python function per URL rule to build its URLs (werkzeug's
    `Rule._compile_builder`): ~35 ms CPU of the ~80 ms an app costs, paid by every test
    that makes one. Those functions depend only on the rule's parts (the rule object is
    their first argument) and its defaults, so a test process compiles each distinct
    rule without defaults once. Without that private method (another werkzeug) nothing
    is shared and nothing else changes."""
    from werkzeug.routing.rules import Rule

    compile_builder = getattr(Rule, "_compile_builder", None)
    if compile_builder is None:
        return
    compiled: dict[tuple, Callable] = {}

    def shared(rule: Rule, append_unknown: bool = True) -> Callable:
        if rule.defaults:  # folded in through the converters' settings: not shared
            return compile_builder(rule, append_unknown)
        key = (rule.rule, tuple(rule._trace), append_unknown)
        if key not in compiled:
            compiled[key] = compile_builder(rule, append_unknown)
        return compiled[key]

    Rule._compile_builder = shared


_share_url_builders()


@functools.cache
def compiled_templates() -> Path:
    """One folder of compiled templates per test process, for every build of the site
    tests (Options.compiled_templates) and every test app's editing pages
    (COMPILED_TEMPLATES): each build compiled the ~20 site templates again, a quarter of
    a small build's CPU, and each app the pages' templates, a third of the admin
    tests'. Jinja checks each template's source against what it compiled, so a test's
    own templates are compiled for it."""
    folder = Path(tempfile.mkdtemp(prefix="calendar-test-templates-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def site_options(content: Path, out: Path, cache: Path,
                 base_url: str = "https://example.org/calendar/", **extra) -> Options:
    """The static builder's options as site tests use them: today is NOW, no progress,
    templates compiled once per process (`extra`: other Options fields)."""
    return Options(content=content, out=out, now=NOW, base_url=base_url, cache_dir=cache,
                   progress=False, compiled_templates=compiled_templates(), **extra)


def build_sample_site(tmp: Path) -> Path:
    """The sample calendar copied to `tmp` and built, once, into tmp/public."""
    shutil.copytree(SAMPLE, tmp / "content")
    report = build(site_options(tmp / "content", tmp / "public", tmp / "cache"))
    assert report.written and not report.problems
    return tmp / "public"


@pytest.fixture(scope="session")
def sample_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample calendar built once per test process (site_options): for tests that
    only read the output. A test that changes files builds its own."""
    return build_sample_site(tmp_path_factory.mktemp("sample-site"))


def set_git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit author of every test; module and session fixtures that commit set it
    themselves (`with pytest.MonkeyPatch.context() as mp: set_git_identity(mp)`), as
    they run before the autouse fixture below."""
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Runner")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "runner@example.org")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    set_git_identity(monkeypatch)


def cli_here(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m calendar_app ARGV` (in `cwd`) run in this process: the same `main`
    without an interpreter's start and imports, half a second each; argparse's refusals
    are its exit code. Each command still runs once as a real process in its tests."""
    from calendar_app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def commit_count(path: Path) -> int:
    """How many commits HEAD of the repository holding `path` has, as `git rev-list
    --count HEAD` says (test_suite_helpers checks it), read in-process: the tests that
    count commits around every request or example spent a git process (~4 ms) on each."""
    import pygit2

    repo = pygit2.Repository(pygit2.discover_repository(str(path)))
    try:
        return sum(1 for _ in repo.walk(repo.head.target))
    finally:
        repo.free()


# libyaml's reader (the app's own choice, store/yamlfile.py): the same data as PyYAML's
# pure-Python `safe_load` about ten times faster; the tests that read record files back
# spent a quarter of their time there.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    """The data of a YAML file, as `yaml.safe_load` reads it."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)


def localized(content: Path, locale: str) -> None:
    """Set the calendar's `locale` in calendar.yaml and commit it."""
    with (content / "calendar.yaml").open("a", encoding="utf-8") as out:
        out.write(f"locale: {locale}\n")
    git(content.parent, "commit", "-qam", f"locale {locale}")


def _init_repo(repo: Path, source: Path | None) -> None:
    content = repo / "content"
    if source is not None:
        shutil.copytree(source, content)
    else:
        content.mkdir(parents=True)
        (content / "calendar.yaml").write_text("title: Test\ntimezone: UTC\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial content")


# One committed repository per source and test process, copied by `make_repo`: a copy
# costs a third of `git init` + `add` + `commit`, and hundreds of tests make one.
_TEMPLATES: dict[Path | None, Path] = {}


def _template(source: Path | None) -> Path:
    if source not in _TEMPLATES:
        base = Path(tempfile.mkdtemp(prefix="calendar-test-template-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        repo = base / "repo"
        with pytest.MonkeyPatch.context() as mp:  # the same author whoever asks first
            set_git_identity(mp)
            _init_repo(repo, source)
            git(repo, "gc", "-q")  # a few pack files to copy instead of a loose object each
        for sample in (repo / ".git" / "hooks").glob("*.sample"):
            sample.unlink()  # never run, only copied; the folder stays for tests' hooks
        _TEMPLATES[source] = repo
    return _TEMPLATES[source]


def _copy_or_link(src: str, dst: str) -> None:
    # Git never changes a written object or pack file, so copies may share them; every
    # other file (the work tree, the index, refs) is the copy's own.
    if f"{os.sep}.git{os.sep}objects{os.sep}" in src:
        os.link(src, dst)
        return
    # What git's index and the warm caches compare (bytes, mode, times), without
    # `copy2`'s extended attributes and flags: two fifths less CPU a copy.
    with open(src, "rb") as source, open(dst, "wb") as target:
        target.write(source.read())
    stat = os.stat(src)
    os.chmod(dst, stat.st_mode & 0o7777)
    os.utime(dst, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def make_repo(tmp_path: Path, source: Path | None = SAMPLE) -> Path:
    """A git repository holding a copy of `source` (or an empty tree) as `content/`,
    with one commit, "initial content"."""
    repo = tmp_path / "repo"
    if source in (SAMPLE, None):
        shutil.copytree(_template(source), repo, copy_function=_copy_or_link)
        # New inodes and ctimes: without this every file would look changed to git
        # until something refreshed the index, as it never did after a fresh commit.
        git(repo, "update-index", "-q", "--refresh")
    else:
        _init_repo(repo, source)
    return repo / "content"


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """A git-tracked copy of the bundled sample calendar."""
    return make_repo(tmp_path)


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        return make_repo(tmp_path_factory.mktemp("template")).parent


@pytest.fixture
def linked_content(tmp_path: Path, template_repo: Path) -> Path:
    """Like `content`, but a hard-linked copy of one session-wide repository: much faster.
    Only for tests that never write a file in place (the app and git always replace
    files by renaming, which leaves the shared template untouched)."""
    repo = tmp_path / "repo"
    shutil.copytree(template_repo, repo, copy_function=os.link)
    return repo / "content"


@pytest.fixture
def watcher_started(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once a file `Watcher` of this test has started. Its inotify watches are in
    place when start() returns (watchdog adds them before its threads run), so a file
    changed after that is seen: the tests of --watch wait on this, not a fixed sleep."""
    from calendar_app.catalog.watcher import Watcher

    started = threading.Event()
    start = Watcher.start

    def start_and_tell(watcher: Watcher) -> None:
        start(watcher)
        started.set()

    monkeypatch.setattr(Watcher, "start", start_and_tell)
    return started


@pytest.fixture
def watch_stops_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The --watch loop looks at its stop event every 20 ms instead of 0.5 s: each
    test of it waited that long to end."""
    monkeypatch.setattr("calendar_app.site.watch.STOP_POLL", 0.02)


@pytest.fixture
def admin(auth: Callable[[str], dict]) -> dict:
    return auth("administrator")


# scrypt's cost for the test users' passwords and the test apps' (PASSWORD_HASH_N): the
# production cost (50-130 ms a check) paid by every sign-in and first Basic request of
# every test was the suite's largest single cost. test_reliability_access checks the
# production cost on a store of its own.
FAST_HASH_N = 16


@pytest.fixture(scope="session")
def users_master(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The users file, made once per session."""
    path = tmp_path_factory.mktemp("users") / "users.yaml"
    store = UserStore(path, FAST_HASH_N)
    return path, {role: store.add(role, role) for role in ROLES}


@pytest.fixture
def users(tmp_path: Path, users_master: tuple[Path, dict[str, str]]) -> dict[str, str]:
    """One user per role, named after it; maps name -> application password."""
    shutil.copy(users_master[0], tmp_path / "users.yaml")
    return users_master[1]


# Sign-in passwords of the editing pages (/admin/): one per role, set once per session.
SIGN_IN_PASSWORD = "correct horse battery"


@pytest.fixture(scope="session")
def signed_users_master(users_master: tuple[Path, dict[str, str]]) -> Path:
    path = users_master[0].with_name("signed-users.yaml")
    shutil.copy(users_master[0], path)
    store = UserStore(path, FAST_HASH_N)
    for role in ROLES:
        store.set_sign_in_password(role, f"{SIGN_IN_PASSWORD} {role}")
    return path


@pytest.fixture
def signed_users(tmp_path: Path, users: dict[str, str], signed_users_master: Path) -> dict:
    """Like `users`, and each role's user also signs in at /admin/ with
    f"{SIGN_IN_PASSWORD} {role}"."""
    shutil.copy(signed_users_master, tmp_path / "users.yaml")
    return users


def csrf_token(page: bytes | str) -> str:
    """The CSRF token a form page of the editing pages carries."""
    text = page.decode() if isinstance(page, bytes) else page
    found = re.search(r'name="csrf_token" value="([^"]+)"', text)
    assert found, "no CSRF token on the page"
    return found.group(1)


def sign_in(client, role: str, password: str | None = None):
    """Sign a test client in at /admin/sign-in as the user of that role."""
    token = csrf_token(client.get("/admin/sign-in").data)
    return client.post("/admin/sign-in", data={
        "name": role, "password": f"{SIGN_IN_PASSWORD} {role}" if password is None else password,
        "csrf_token": token})


_WARM_CACHE: list[Path] = []


def _warm_cache() -> Path:
    """The start-up caches (catalog, first-seen times, search postings) of one app
    opened over a copy of the sample template, once per test process. Every entry in
    them is keyed by a file's stat or the git HEAD, which `make_repo`'s copies keep, so
    an app over such a copy starts as a restarted server does; a file a test changed
    first is parsed again, as in production."""
    if not _WARM_CACHE:
        base = Path(tempfile.mkdtemp(prefix="calendar-test-cache-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        content = make_repo(base)
        open_calendar(content, base / "users.yaml", base / "cache", NOW,
                      index_in_background=False).close()
        _WARM_CACHE.append(base / "cache")
    return _WARM_CACHE[0]


def _app_config(content: Path, base: Path) -> dict:
    """A test app's configuration over `content`, its users file and caches in `base`:
    the caches start as the sample's (see `_warm_cache`; the start-up cache's own tests
    start without)."""
    shutil.copytree(_warm_cache(), base / "cache")
    return {"CONTENT_DIR": str(content), "USERS_FILE": str(base / "users.yaml"),
            "CACHE_DIR": str(base / "cache"), "NOW": NOW, "TESTING": True,
            # Tests log in wrongly on purpose, many times; throttling has its own tests.
            "LOGIN_MAX_FAILURES": 10_000, "PASSWORD_HASH_N": FAST_HASH_N,
            "COMPILED_TEMPLATES": str(compiled_templates())}


@pytest.fixture
def config(tmp_path: Path, content: Path, users: dict[str, str]) -> dict:
    """An app's configuration over `content` (`_app_config`)."""
    return _app_config(content, tmp_path)


@pytest.fixture
def app(config: dict):
    return create_app(config)


@pytest.fixture
def client(app):
    return app.test_client()


def basic_headers(users: dict[str, str]) -> Callable[[str], dict]:
    def headers(name: str, password: str | None = None) -> dict:
        secret = users.get(name, "") if password is None else password
        token = base64.b64encode(f"{name}:{secret}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

    return headers


@pytest.fixture
def auth(users: dict[str, str]) -> Callable[[str], dict]:
    """auth("administrator") -> headers with that user's Basic credentials."""
    return basic_headers(users)


# -- one app per module, for tests that only read -------------------------------------------
# A test's own app costs ~85 ms of set-up (a content copy, create_app and its git child);
# hundreds of tests only send GETs (or HEAD/OPTIONS) and look at the answers. They share
# one app over one content copy per module. Such a test must change nothing: no write
# through the interface or to a file, no sign-in (a session is per client, but a sign-in
# counts on the app's throttle and writes the users file). Each test still gets its own
# client (its own cookies).
@pytest.fixture(scope="module")
def module_content(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git-tracked copy of the sample shared by a module's read-only tests."""
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        return make_repo(tmp_path_factory.mktemp("module-content"))


@pytest.fixture(scope="module")
def module_app(module_content: Path, users_master: tuple[Path, dict[str, str]]):
    """The app of a module's read-only tests (`reading_client`), over `module_content`."""
    base = module_content.parent.parent
    repo = module_content.parent
    shutil.copy(users_master[0], base / "users.yaml")
    # A module may add its own records to `module_content` (overriding it), committed.
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    head = git(repo, "rev-parse", "HEAD")
    with pytest.MonkeyPatch.context() as mp:
        set_git_identity(mp)
        app = create_app(_app_config(module_content, base))
    yield app
    app.extensions["calendar"].close()
    # The guard of the sharing: a test that wrote (a commit, a changed or new file) fails
    # the module's teardown here, naming what changed.
    assert git(repo, "rev-parse", "HEAD") == head, git(repo, "log", "--stat", f"{head.strip()}..")
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.fixture
def reading_client(module_app):
    """A client of the module's shared app: for tests that only read (see above)."""
    return module_app.test_client()


@pytest.fixture(scope="session")
def reading_auth(users_master: tuple[Path, dict[str, str]]) -> Callable[[str], dict]:
    """`auth` for `reading_client`: the same users, passwords and headers."""
    return basic_headers(users_master[1])


# -- a real browser, driven (tests/test_site_search.py, test_site_now.py, ...) -------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NEEDS_CHROMIUM = ("needs Chromium: install Debian's chromium (`apt-get install chromium`), "
                  "as .ci/run does")


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (no browser download); skipped without it.
    One per test process: starting Chromium costs about a second. Tests open their own
    contexts or pages on it and close them. While it runs, the thread counts as inside
    an event loop (Playwright's sync API), so a test must not call `asyncio.run`."""
    if CHROMIUM is None:
        pytest.skip(NEEDS_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM,
                                          args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@contextlib.contextmanager
def heard(page) -> Iterator[list[str]]:
    """What `page` reports while the block runs: console messages ("console error:
    ..."), uncaught errors ("uncaught: ..."), failed loads ("failed: <url>")."""
    problems: list[str] = []
    listeners = {
        "console": lambda message: problems.append(f"console {message.type}: {message.text}"),
        "pageerror": lambda error: problems.append(f"uncaught: {error}"),
        "requestfailed": lambda request: problems.append(f"failed: {request.url}")}
    for event, listener in listeners.items():
        page.on(event, listener)
    try:
        yield problems
    finally:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)


@pytest.fixture(scope="session")
def plain_page(browser):
    """One tab per test process for the tests that need no context of their own (no
    clock, zone, axe or JavaScript switch): a new tab starts a renderer, ~0.4 s of
    Chromium's CPU. Use it through `site_tab`."""
    context = browser.new_context()
    yield context.new_page()
    context.close()


@pytest.fixture
def site_tab(plain_page):
    """The process's plain tab at 1280 x 720 px, and what its pages report during the
    test (`heard`; test_site_browser checks that it hears each kind)."""
    plain_page.set_viewport_size({"width": 1280, "height": 720})
    with heard(plain_page) as problems:
        yield plain_page, problems


@pytest.fixture(scope="session")
def axe_page(browser):
    """One tab per test process, 1280 x 900 px, in a context that carries axe-core
    (sitechecks.with_axe), for the tests that need no clock: test_site_quality,
    test_admin_i18n_browser."""
    context = with_axe(browser.new_context(viewport={"width": 1280, "height": 900}))
    yield context.new_page()
    context.close()


@pytest.fixture(scope="session")
def clocked_page(browser):
    """One tab per test process for the tests that set its clock before each page they
    read (Playwright's clock stays installed in the tab's context): test_site_now,
    test_site_search, test_site_i18n_browser. A context and its tab cost most of a
    second of Chromium's CPU."""
    context = browser.new_context()
    yield context.new_page()
    context.close()


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """A shared repository: a bare clone of a repository holding the sample."""
    source = make_repo(tmp_path).parent
    bare = tmp_path / "shared.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    return bare


def clone(bare: Path, dest: Path) -> Path:
    git(bare.parent, "clone", "-q", str(bare), str(dest))
    return dest


def embed_snapshots(site: Path) -> int:
    """How many list snapshots the site writes for the <calendar-events> component: an
    incremental build plans each again (each is signed by the events it holds), so a
    build's `skipped` count holds them besides the outputs of what changed."""
    return sum(1 for _ in (site / "wp-json/tribe/events/v1/events/embed").rglob("*.json"))
