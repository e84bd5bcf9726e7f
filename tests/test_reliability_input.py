"""Hostile and random input (issue 6, point 4): hypothesis properties for date parsing,
slug generation and YAML round-trips; hostile record files (YAML bombs, Python-object
tags, huge scalars, deep nesting, invalid UTF-8, NUL bytes) are reported by the
catalog and never executed, never crash the process and never exhaust memory; the same
in request bodies answers 400 in the interface's error shape, never 5xx.

Hostile files are parsed in a child process (with an address-space limit) so that an
interpreter crash (segfault) or a memory blow-up shows up as a failing test, not as a
dead test run.

Figures are printed with the prefix "RELIABILITY" (run with -s).
"""

from __future__ import annotations

import datetime as dt
import json
import resource
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import BASE, NOW, make_repo
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from calendar_app.http.app import create_app
from calendar_app.model import dates, slugs
from calendar_app.model.records import UNSTORABLE_TEXT, Record, from_file, to_file
from calendar_app.model.resources import EVENTS
from calendar_app.store import yamlfile

REPO_ROOT = Path(__file__).resolve().parent.parent
FAST = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
# The YAML and record round trips (the costliest properties here) draw 100 examples in
# the default run, the explicit examples still included; `-m slow` draws 300.
ROUND_TRIPS = [100, pytest.param(300, marks=pytest.mark.slow)]


def sized(size: int) -> settings:
    return settings(FAST, max_examples=size)
UTC = dates.zone("UTC")
ZONES = ["UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata", "Australia/Lord_Howe",
         "Pacific/Chatham", "America/St_Johns"]


# -- date parsing -------------------------------------------------------------------------
@FAST
@given(st.one_of(st.text(max_size=80), st.text(alphabet="0123456789-: +TZapmAPMnextwdy",
                                               max_size=40),
                 st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
                 st.lists(st.integers(), max_size=3)),
       st.sampled_from(ZONES))
@example("9" * 5000, "UTC")
@example("+99999999999-01-01", "UTC")
@example("2027-02-30 10:00", "UTC")
@example("1e308", "UTC")
@example(float("inf"), "UTC")
@example(10**30, "UTC")
def test_parse_datetime_raises_only_date_error(value: object, zone_name: str) -> None:
    """Anything a client can send either parses to a whole-second naive datetime or
    raises DateError: never another exception (which would be a 500)."""
    try:
        result = dates.parse_datetime(value, dates.zone(zone_name), NOW)
    except dates.DateError:
        return
    assert isinstance(result, dt.datetime) and result.tzinfo is None
    assert result.microsecond == 0


@FAST
@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2200, 1, 1)),
       st.sampled_from(ZONES))
def test_parse_datetime_round_trips_its_own_format(value: dt.datetime, zone_name: str) -> None:
    value = value.replace(microsecond=0)
    assert dates.parse_datetime(dates.fmt(value), dates.zone(zone_name), NOW) == value


@FAST
@given(st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2200, 1, 1),
                    timezones=st.just(dt.UTC)),
       st.sampled_from(ZONES))
def test_explicit_offsets_are_instants(value: dt.datetime, zone_name: str) -> None:
    """`2027-03-05T19:00:00+02:00` is the same instant whatever zone it is read in."""
    value = value.replace(microsecond=0)
    tz = dates.zone(zone_name)
    local = dates.parse_datetime(value.isoformat(), tz, NOW)
    # Events store wall time: in the repeated hour when clocks go back it names two
    # instants, and the later one comes back as the earlier (fold=0, documented).
    later = local.replace(tzinfo=tz, fold=1).astimezone(dt.UTC).replace(tzinfo=None)
    assert dates.to_utc(local, tz) == value.replace(tzinfo=None) or dates.in_dst_gap(
        local, tz) or later == value.replace(tzinfo=None)


# -- slugs ----------------------------------------------------------------------------------
@FAST
@given(st.text(max_size=400))
@example("../../etc/passwd")
@example(".hidden")
@example("a\x00b")
@example("CON")
@example("feed")
def test_sanitize_title_is_safe_and_idempotent(title: str) -> None:
    slug = slugs.sanitize_title(title)
    assert slug == slugs.sanitize_title(slug)
    assert len(slug) <= slugs.MAX_LENGTH
    if slug:
        assert slugs.is_safe_slug(slug), slug
        assert "/" not in slug and "\x00" not in slug and not slug.startswith(".")


@FAST
@given(st.text(alphabet=string.ascii_lowercase + "-", min_size=1, max_size=220).map(
    lambda s: slugs.sanitize_title(s) or "x"),
       st.sets(st.text(alphabet=string.ascii_lowercase + "-0123456789", min_size=1,
                       max_size=210), max_size=30))
def test_unique_slug_never_returns_a_taken_one(base: str, taken: set[str]) -> None:
    taken |= {base, f"{base}-2"}
    slug = slugs.unique_slug(base, taken.__contains__)
    assert slug not in taken and slug not in slugs.RESERVED
    assert len(slug) <= slugs.MAX_LENGTH and slugs.is_safe_slug(slug)


# -- YAML round-trips ---------------------------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=200)
SCALAR = st.one_of(TEXT, st.integers(-(10**12), 10**12), st.booleans(),
                   st.floats(allow_nan=False, allow_infinity=False), st.none())
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.text(string.ascii_letters + "_", min_size=1, max_size=10), inner,
                    max_size=4)), max_leaves=12)




@pytest.mark.parametrize("size", ROUND_TRIPS)
def test_yaml_dump_load_round_trip(size: int) -> None:
    @sized(size)
    @given(st.dictionaries(st.text(string.ascii_letters + "_", min_size=1, max_size=12),
                           VALUE, max_size=8))
    @example({"title": "yes"})
    @example({"title": "2027-01-01"})
    @example({"title": "0x1F"})
    @example({"title": "~"})
    @example({"title": "line\nline\n\n"})
    @example({"title": " lead"})
    @example({"title": "\u2028"})
    @example({"title": "\ufeffbom"})
    def round_trip(mapping: dict) -> None:
        text = yamlfile.dump(mapping)
        assert "&" not in text.split(":")[0]  # no anchors
        loaded = yamlfile.load(text.encode("utf-8"))
        assert loaded == mapping  # exactly: blocks say how their text ends (|, |-, |+)

    round_trip()


SLUG = st.text(string.ascii_lowercase + string.digits + "-", min_size=1, max_size=40).filter(
    lambda s: s.strip("-") == s and slugs.is_safe_slug(s))
DATE = st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1)).map(
    lambda d: d.replace(microsecond=0))


# What a record may hold: the loader refuses what the interface refuses (control
# characters, line separators).
RECORD_TEXT = TEXT.map(lambda text: UNSTORABLE_TEXT.sub("", text))


@st.composite
def event_records(draw) -> Record:
    start = draw(DATE)
    end = start + dt.timedelta(minutes=draw(st.integers(0, 60 * 24 * 30)))
    data = {"id": draw(st.integers(1, 10**9)), "title": draw(RECORD_TEXT.filter(str.strip)),
            "slug": draw(SLUG), "status": draw(st.sampled_from(
                ["publish", "draft", "pending", "private", "future", "trash"])),
            "author": draw(st.integers(0, 100)), "date": draw(DATE), "modified": draw(DATE),
            "start_date": start, "end_date": end,
            "timezone": draw(st.sampled_from(ZONES)),
            "description": draw(RECORD_TEXT), "excerpt": draw(RECORD_TEXT),
            "cost": draw(st.one_of(st.none(), RECORD_TEXT,
                                   st.lists(RECORD_TEXT.filter(bool), max_size=3))),
            "all_day": draw(st.booleans()), "featured": draw(st.booleans()),
            "categories": draw(st.lists(SLUG, max_size=3, unique=True)),
            "venue": draw(st.one_of(st.none(), SLUG))}
    if data["all_day"]:  # an all-day event is kept from 00:00:00 to 23:59:59 (records.py)
        data["start_date"] = start.replace(hour=0, minute=0, second=0)
        data["end_date"] = end.replace(hour=23, minute=59, second=59)
    return Record("events", {k: v for k, v in data.items() if v not in (None, "")},
                  f"events/{start.year}/{data['slug']}.yaml")


@pytest.mark.parametrize("size", ROUND_TRIPS)
def test_record_file_round_trip(size: int) -> None:
    """to_file -> dump -> load -> from_file gives the same record back."""
    @sized(size)
    @given(event_records())
    def round_trip(record: Record) -> None:
        text = yamlfile.dump(to_file(record))
        again = from_file("events", yamlfile.load(text.encode()), record.path)
        assert to_file(again) == to_file(record)

    round_trip()




@pytest.mark.parametrize("size", ROUND_TRIPS)
def test_comment_keeping_edit_round_trip(size: int) -> None:
    """yamlfile.edit of a commented file gives exactly the edited mapping back."""
    @sized(size)
    @given(event_records(), st.dictionaries(
        st.sampled_from(["title", "cost", "excerpt", "description", "featured", "categories"]),
        st.one_of(TEXT.filter(str.strip), st.booleans(), st.lists(SLUG, max_size=3)),
        max_size=4))
    def round_trip(record: Record, changes: dict) -> None:
        text = "# kept comment\n" + yamlfile.dump(to_file(record))
        order = [f.yaml_key for f in EVENTS.fields]
        edited = yamlfile.edit(text, changes, order)
        assert edited.startswith("# kept comment\n")
        expected = {**to_file(record), **changes}
        assert yamlfile.load(edited.encode()) == expected

    round_trip()


def test_edit_keeps_untouched_text_that_yaml_1_2_reads_as_a_number() -> None:
    """ruamel took `0e1` (a string in YAML 1.1) for a float and wrote it back as `0e0`:
    a change to another key must leave such values as they read."""
    text = "# kept\nid: 1\nslug: 0e1\ncost: 1e3\ntags:\n  - 0e5\n"
    edited = yamlfile.edit(text, {"title": "New"}, ["id", "title", "slug", "cost", "tags"])
    assert yamlfile.load(edited.encode()) == {"id": 1, "title": "New", "slug": "0e1",
                                              "cost": "1e3", "tags": ["0e5"]}
    assert edited.startswith("# kept\n")


@pytest.mark.parametrize("text", ["NO", "on", "Off", "1_000", "0x1F", "2026-01-01", "~", "12"])
def test_edit_quotes_text_that_yaml_1_1_reads_as_another_type(text: str) -> None:
    """ruamel writes YAML 1.2 (where `NO` is a string), the loader reads 1.1 (a bool)."""
    edited = yamlfile.edit("id: 1\ncost: x\ntags:\n  - a\n",
                           {"cost": text, "tags": [text, "b"]}, ["id", "cost", "tags"])
    assert yamlfile.load(edited.encode()) == {"id": 1, "cost": text, "tags": [text, "b"]}
    assert f"cost: '{text}'" in edited  # single quotes, as the canonical form has them


# -- hostile record files ----------------------------------------------------------------
HOSTILE: dict[str, bytes] = {
    "billion-laughs": b"id: 1\ntitle: &a [lol, lol, lol]\nb: &b [*a, *a, *a, *a]\n"
                      b"c: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n",
    "alias-in-flow": b"{id: &i 1, title: *i}\n",
    "python-object-apply": b"id: 1\ntitle: !!python/object/apply:os.system "
                           b"['touch PWNED']\n",
    "python-object-new": b"!!python/object/new:os.system [touch PWNED]\n",
    "python-name": b"id: !!python/name:os.system\n",
    "local-tag": b"id: 1\ntitle: !custom x\n",
    "huge-scalar": b"id: 1\ntitle: " + b"x" * ((1 << 20) + 10) + b"\n",
    "huge-int": b"id: " + b"9" * 100_000 + b"\ntitle: x\n",
    "deep-flow-sequence": b"id: 1\ntitle: " + b"[" * 50_000 + b"]" * 50_000 + b"\n",
    "deep-flow-mapping": b"id: 1\ntitle: " + b"{a: " * 10_000 + b"1" + b"}" * 10_000 + b"\n",
    "deep-block": "".join("  " * i + f"k{i}:\n" for i in range(400)).encode(),
    "invalid-utf8": b"id: 1\ntitle: caf\xe9\n",
    "utf16-bom": "id: 1\ntitle: x\n".encode("utf-16"),
    "nul-byte": b"id: 1\ntitle: a\x00b\n",
    "not-a-mapping": b"- 1\n- 2\n",
    "binary-garbage": bytes(range(256)) * 8,
}

_CHILD = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: bounded memory
    from calendar_app.store import yamlfile
    from calendar_app.model.records import RecordError, from_file
    data = Path(sys.argv[1]).read_bytes()
    try:
        from_file("events", yamlfile.load(data), "events/x.yaml")
        print(json.dumps({"result": "accepted"}))
    except (yamlfile.YamlError, RecordError) as exc:
        print(json.dumps({"result": "refused", "line": getattr(exc, "line", 0),
                          "message": str(exc)}))
    # This process's own peak: ru_maxrss keeps the peak of the process it was started
    # from (the test process, a few hundred MB late in a run), VmHWM starts at exec.
    try:
        status = Path("/proc/self/status").read_text()
        peak = int(status.split("VmHWM:")[1].split()[0])
    except (OSError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_kib": peak}))
""")


def _parse_in_child(path: Path) -> tuple[int, list[dict], str]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], cwd=path.parent,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, lines, proc.stderr[-2000:]




@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_is_refused_in_bounded_memory(name: str, tmp_path: Path) -> None:
    """Parsing alone: a clear refusal (YamlError/RecordError with a line), no crash, no
    code executed, memory bounded (1 GiB address-space limit, peak reported)."""
    path = tmp_path / "hostile.yaml"
    path.write_bytes(HOSTILE[name])
    code, lines, err = _parse_in_child(path)
    assert not (tmp_path / "PWNED").exists(), "a YAML tag executed code"
    assert code == 0, f"parser process died with {code} (negative = signal): {err}"
    assert lines and lines[0]["result"] == "refused", (lines, err)
    assert lines[1]["peak_kib"] < 512 * 1024


_CATALOG_CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from pathlib import Path
    from calendar_app.catalog.catalog import Catalog
    from calendar_app.store.content import ContentTree
    root = Path(sys.argv[1])
    catalog = Catalog(ContentTree(root, root.parent / "lock"))
    catalog.load()
    print(json.dumps({"records": len(catalog.records),
                      "problems": {p: [pr.line, pr.message[:80]]
                                   for p, pr in catalog.problems.items()},
                      "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


def test_catalog_reports_every_hostile_file_and_serves_the_rest(tmp_path: Path) -> None:
    """All hostile files at once in a real tree: the catalog loads (in a child process:
    a crash is a failure), reports each one with its path, and keeps every valid record."""
    content = make_repo(tmp_path)
    valid = len(list((content / "events").rglob("*.yaml")))
    for name, data in HOSTILE.items():
        (content / "events" / f"hostile-{name}.yaml").write_bytes(data)
    proc = subprocess.run([sys.executable, "-c", _CATALOG_CHILD, str(content)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, f"catalog load died with {proc.returncode}: " \
                                 f"{proc.stderr[-2000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    hostile = {f"events/hostile-{n}.yaml" for n in HOSTILE}
    assert set(out["problems"]) == hostile, out["problems"]
    assert sum(1 for p in out["problems"] if p.startswith("events/hostile")) == len(HOSTILE)
    assert out["records"] >= valid
    print("\nRELIABILITY hostile-files: " + json.dumps(
        {"files": len(HOSTILE), "reported": len(out["problems"]),
         "peak_mib": out["peak_kib"] // 1024}))


# -- hostile request bodies ----------------------------------------------------------------
@pytest.fixture
def write_client(config: dict, auth):
    app = create_app(config)
    yield app.test_client(), auth("administrator")
    app.extensions["calendar"].close()


VALID_EVENT = {"title": "Ok", "start_date": "2027-01-01 10:00:00",
               "end_date": "2027-01-01 11:00:00"}
BODIES = {
    "json-nul-in-title": (json.dumps({**VALID_EVENT, "title": "a\x00b"}).encode(),
                          "application/json"),
    "json-nul-in-description": (json.dumps({**VALID_EVENT, "description": "x\x00"}).encode(),
                                "application/json"),
    "json-raw-nul": (b'{"title": "a\x00b"}', "application/json"),
    "json-invalid-utf8": (b'{"title": "caf\xe9"}', "application/json"),
    "json-lone-surrogate": (b'{"title": "\\ud800", "start_date": "2027-01-01 10:00:00", '
                            + b'"end_date": "2027-01-01 11:00:00"}', "application/json"),
    "json-deep-nesting": (b'{"title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                          "application/json"),
    "json-deep-nesting-1000": (b'{"title": ' + b"[" * 1000 + b"]" * 1000 + b"}",
                               "application/json"),
    "json-huge-number": (b'{"title": "x", "author": ' + b"9" * 5000 + b"}",
                         "application/json"),
    "form-nul": (b"title=a%00b&start_date=2027-01-01+10:00&end_date=2027-01-01+11:00",
                 "application/x-www-form-urlencoded"),
    "form-invalid-utf8": (b"title=caf%E9&start_date=2027-01-01+10:00&end_date=2027-01-01+11:00",
                          "application/x-www-form-urlencoded"),
    "form-unicode-digit-key": (b"venue[%C2%B9]=x&title=t", "application/x-www-form-urlencoded"),
    "form-deep-brackets": (b"a" + b"[x]" * 5000 + b"=1", "application/x-www-form-urlencoded"),
    "yaml-tag-as-text": (json.dumps({**VALID_EVENT, "title": "!!python/object/apply:os.system"
                                     " ['touch PWNED']"}).encode(), "application/json"),
    "yaml-alias-as-text": (json.dumps({**VALID_EVENT, "description": "&a [*a]"}).encode(),
                           "application/json"),
}




@pytest.mark.parametrize("name", sorted(BODIES))
def test_hostile_body_is_a_400_never_a_5xx(name: str, write_client, content: Path) -> None:
    client, headers = write_client
    data, mimetype = BODIES[name]
    for path in (f"{BASE}/events", f"{BASE}/events/100"):
        response = client.post(path, data=data, content_type=mimetype, headers=headers)
        body = response.get_json(silent=True)
        assert response.status_code < 500, (path, response.status_code, body)
        assert isinstance(body, dict), response.get_data()[:300]
        if response.status_code >= 400:
            assert body.get("data", {}).get("status") == response.status_code, body
        if response.status_code in (200, 201):
            # Accepted as plain text: stored as text, never interpreted.
            text = yamlfile.load((content / _path_of(content, body["id"])).read_bytes())
            assert "\x00" not in json.dumps(text, default=str)
    assert not Path("PWNED").exists()


def _path_of(content: Path, rid: int) -> Path:
    for path in content.rglob("*.yaml"):
        try:
            if yamlfile.load(path.read_bytes()).get("id") == rid:
                return path.relative_to(content)
        except yamlfile.YamlError:
            continue
    raise AssertionError(rid)


@pytest.mark.parametrize("query", [
    "%C2%B9=1",
    "a[%C2%B2]=1",
    "search=%FF%FE",
                                   "search=a%00b", "include=" + ",".join(["1"] * 50),
                                   "a" + "[x]" * 2000 + "=1", "per_page=1e999",
                                   "page=99999999999999999999999", "start_date=%00"])
def test_hostile_query_is_never_a_5xx(query: str, reading_client) -> None:
    for path in ("/events", "/venues", "/organizers", "/categories", "/tags",
                 "/events/by-slug/x", "/events/100"):
        response = reading_client.get(f"{BASE}{path}?{query}")
        assert response.status_code < 500, (path, query, response.get_data()[:300])


def test_update_with_control_character_keeps_the_record(config: dict, auth) -> None:
    """Through the interface: PATCH a multi-line description holding ESC answers 200,
    and the record must still be there after a restart."""
    app = create_app(config)
    client = app.test_client()
    response = client.patch(f"{BASE}/events/105", json={"description": "one\nt\x1bwo"},
                            headers=auth("administrator"))
    assert response.status_code in (200, 400)
    app.extensions["calendar"].close()
    again = create_app(config)
    assert not again.extensions["calendar"].catalog.problems
    assert again.test_client().get(f"{BASE}/events/105").status_code == 200
    again.extensions["calendar"].close()


def test_update_with_next_line_character_survives_a_restart(config: dict, auth) -> None:
    app = create_app(config)
    response = app.test_client().patch(f"{BASE}/events/105", json={"excerpt": "a\x85b"},
                                       headers=auth("administrator"))
    if response.status_code == 400:  # refused as unstorable: nothing to lose
        assert response.get_json()["code"] == "rest_invalid_param"
        app.extensions["calendar"].close()
        return
    assert response.status_code == 200
    before = response.get_json()["excerpt"]
    app.extensions["calendar"].close()
    again = create_app(config)
    assert again.test_client().get(f"{BASE}/events/105").get_json()["excerpt"] == before
    again.extensions["calendar"].close()


def test_memory_limit_assumption() -> None:
    """The child processes above rely on RLIMIT_AS being settable here."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    assert hard == resource.RLIM_INFINITY or hard >= 1 << 30
