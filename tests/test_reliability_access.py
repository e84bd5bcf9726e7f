"""Access (issue 6, points 5 and 6): what anonymous readers can see, security headers,
CORS, login throttling (429), roles (spec 6.3), password storage, and the configurable
limits, each refusal in the interface's error shape.

Figures are printed with the prefix "RELIABILITY" (run with -s).
"""

from __future__ import annotations

import hmac
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import BASE, NOW, git

from calendar_app.http.app import create_app

REPO_ROOT = Path(__file__).resolve().parent.parent
MARK = "Zqxhidden"  # a word only non-public records carry
HIDDEN_STATUSES = ("draft", "pending", "private", "future", "trash")


def _error_shape(response, status: int, code: str | None = None) -> dict:
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert isinstance(body, dict) and isinstance(body.get("code"), str) and body["code"]
    assert isinstance(body.get("message"), str)
    assert body["data"]["status"] == status
    if code:
        assert body["code"] == code, body
    return body


# -- hidden records never reach anonymous readers ------------------------------------------
@pytest.fixture
def hidden(app, client, auth) -> dict:
    """One event, venue and organizer per non-public status, all carrying MARK, linked
    to a category and tag of their own and to each other."""
    admin = auth("administrator")
    made: dict = {"events": {}, "venues": {}, "organizers": {}}
    cat = client.post(f"{BASE}/categories", json={"name": f"{MARK} category"}, headers=admin)
    tag = client.post(f"{BASE}/tags", json={"name": f"{MARK} tag"}, headers=admin)
    assert cat.status_code == 201 and tag.status_code == 201
    made["category"], made["tag"] = cat.get_json()["id"], tag.get_json()["id"]
    for status in HIDDEN_STATUSES:
        api_status = "publish" if status == "trash" else status
        # Venues and organizers have no publication date to be scheduled by: a "future"
        # one is published at once, so that slot holds a second draft for them.
        linked_status = "draft" if status == "future" else api_status
        venue = client.post(f"{BASE}/venues", json={"venue": f"{MARK} venue {status}",
                                                    "status": linked_status}, headers=admin)
        org = client.post(f"{BASE}/organizers", json={
            "organizer": f"{MARK} organizer {status}", "status": linked_status},
            headers=admin)
        assert venue.status_code == 201 and org.status_code == 201, venue.get_json()
        event_body = {"title": f"{MARK} event {status}", "status": api_status,
                      "start_date": "2026-12-10 10:00:00", "end_date": "2026-12-10 12:00:00",
                      "description": f"{MARK} text", "categories": [made["category"]],
                      "tags": [made["tag"]], "venue": venue.get_json()["id"],
                      "organizer": [org.get_json()["id"]], "slug": f"{MARK.lower()}-{status}"}
        if status == "future":
            event_body["date"] = "2027-06-01 10:00:00"
        event = client.post(f"{BASE}/events", json=event_body, headers=admin)
        assert event.status_code == 201, event.get_json()
        ids = {"events": event.get_json(), "venues": venue.get_json(),
               "organizers": org.get_json()}
        for collection, record in ids.items():
            if status == "trash":
                r = client.delete(f"{BASE}/{collection}/{record['id']}", headers=admin)
                assert r.status_code == 200
                record = r.get_json()
            made[collection][status] = record
    for collection in ("events", "venues", "organizers"):
        for status, record in made[collection].items():
            wanted = "draft" if status == "future" and collection != "events" else status
            assert record["status"] == wanted, (collection, status, record["status"])
    return made


def _anonymous_urls(made: dict) -> list[str]:
    urls = [f"{BASE}/", f"{BASE}/doc", "/wp-json/", f"{BASE}/categories", f"{BASE}/tags",
            f"{BASE}/categories/{made['category']}", f"{BASE}/tags/{made['tag']}",
            f"{BASE}/categories?hide_empty=1", f"{BASE}/tags?hide_empty=0&search={MARK}",
            f"{BASE}/categories?search={MARK}"]
    window = "start_date=2000-01-01&end_date=2100-01-01"
    for collection in ("events", "venues", "organizers"):
        records = made[collection]
        ids = ",".join(str(r["id"]) for r in records.values())
        urls += [f"{BASE}/{collection}", f"{BASE}/{collection}?search={MARK}",
                 f"{BASE}/{collection}?search={MARK}&{window}&per_page=50",
                 f"{BASE}/{collection}?include={ids}",
                 f"{BASE}/{collection}?{window}&per_page=50&page=1",
                 f"{BASE}/{collection}?{window}&per_page=50&page=2",
                 f"{BASE}/{collection}?status=draft", f"{BASE}/{collection}?status=any",
                 f"{BASE}/{collection}?status=trash"]
        for record in records.values():
            urls += [f"{BASE}/{collection}/{record['id']}",
                     f"{BASE}/{collection}/by-slug/{record['slug']}",
                     f"{BASE}/{collection}/{record['id']}?_method=GET",
                     f"{BASE}/{collection}/{record['id']}?password=x"]
    event_ids = [r["id"] for r in made["events"].values()]
    urls += [f"{BASE}/events?categories={made['category']}&{window}",
             f"{BASE}/events?tags={made['tag']}&{window}",
             f"{BASE}/events?venue={made['venues']['draft']['id']}&{window}",
             f"{BASE}/events?organizer={made['organizers']['draft']['id']}&{window}",
             f"{BASE}/venues?event={event_ids[0]}", f"{BASE}/organizers?event={event_ids[0]}",
             f"{BASE}/venues?has_events=1", f"{BASE}/organizers?only_with_upcoming=1",
             f"{BASE}/categories?event={event_ids[0]}", f"{BASE}/tags?post={event_ids[0]}"]
    return urls


def test_hidden_records_invisible_to_anonymous_everywhere(hidden: dict, client,
                                                          auth) -> None:
    urls = _anonymous_urls(hidden)
    hidden_ids = {r["id"] for c in ("events", "venues", "organizers")
                  for r in hidden[c].values()}
    for url in urls:
        response = client.get(url)
        # The search word is echoed in rest_url: not a leak.
        text = response.get_data(as_text=True).replace(f"search={MARK}", "")
        assert MARK not in text.replace(f"{MARK} category", "").replace(f"{MARK} tag", ""), (
            url, response.status_code, text[:400])
        assert response.status_code < 500, url
        body = response.get_json(silent=True)
        if response.status_code == 200 and isinstance(body, dict):
            for key in ("events", "venues", "organizers"):
                listed = {item["id"] for item in body.get(key, []) if isinstance(item, dict)}
                assert not listed & hidden_ids, (url, listed & hidden_ids)
            if body.get("id") in hidden_ids:
                raise AssertionError(f"{url} answered hidden record {body['id']}")
        if "/by-slug/" in url or re.search(r"/(events|venues|organizers)/\d+", url):
            assert response.status_code in (401, 403, 404), (url, response.status_code)
        # Counts: the terms only count published events.
        if isinstance(body, dict) and body.get("id") in (hidden["category"], hidden["tag"]):
            assert body.get("count") == 0, (url, body)
        if url.endswith(f"search={MARK}") and "X-TEC-Total" in response.headers and (
                re.search(r"/(events|venues|organizers)\?", url)):
            assert response.headers["X-TEC-Total"] == "0", (url, response.headers)
    # The same requests with an editor's credentials do see them (the test is not vacuous).
    editor = auth("editor")
    seen = client.get(f"{BASE}/events?search={MARK}&start_date=2000-01-01&end_date=2100-01-01"
                      "&status=draft,pending,private,future", headers=editor).get_json()
    assert len(seen["events"]) == 4
    print("\nRELIABILITY anonymous-visibility: " + json.dumps(
        {"urls": len(urls), "hidden_records": len(hidden_ids), "leaks": 0}))


def test_hidden_records_absent_from_built_site(hidden: dict, app, tmp_path: Path) -> None:
    """JSON snapshots, iCalendar feeds and pages of the static site (the builder)."""
    content = Path(app.config["CONTENT_DIR"])
    out = tmp_path / "public"
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "build.py"), "--content",
                           str(content), "--out", str(out)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    # The category and tag are public terms (their pages exist); nothing else may show.
    public = (f"{MARK} category", f"{MARK} tag", f"{MARK.lower()}-category",
              f"{MARK.lower()}-tag")
    # Also as a feed's name in the pages' subscribe links (percent-encoded).
    public += tuple(quote(word, safe="") for word in public)

    def leaked(text: bytes) -> bool:
        for word in public:
            text = text.replace(word.encode(), b"")
        return MARK.encode() in text or MARK.lower().encode() in text

    leaks = [p.relative_to(out).as_posix() for p in files
             if leaked(p.read_bytes()) or leaked(p.relative_to(out).as_posix().encode())]
    assert not leaks, leaks[:10]
    print("\nRELIABILITY site-visibility: " + json.dumps({"files": len(files), "leaks": 0}))


# -- security headers --------------------------------------------------------------------------
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                    "Referrer-Policy": None, "Content-Security-Policy": None}


def test_security_headers_on_every_response(tmp_path: Path, config: dict, auth) -> None:
    config.update(MAX_CONTENT_LENGTH=4096, MAX_QUERY_LENGTH=200, LOGIN_MAX_FAILURES=2,
                  LOGIN_WINDOW=60)
    app = create_app(config)
    client = app.test_client()
    admin = auth("administrator")
    ok = client.get(f"{BASE}/events/100")
    requests = [
        ("GET", f"{BASE}/", {}, None), ("GET", f"{BASE}/doc", {}, None),
        ("GET", "/wp-json/", {}, None), ("GET", f"{BASE}/events", {}, None),
        ("GET", f"{BASE}/events/100", {"If-None-Match": ok.headers["ETag"]}, None),  # 304
        ("GET", f"{BASE}/events/999999", {}, None), ("GET", f"{BASE}/nope", {}, None),
        ("DELETE", f"{BASE}/events", {}, None),  # 405
        ("POST", f"{BASE}/events", {}, {"title": "x"}),  # 401
        ("POST", f"{BASE}/events", admin, {"title": "x"}),  # 400
        ("POST", f"{BASE}/events", admin, {"title": "y" * 8000}),  # 413
        ("GET", f"{BASE}/events?search=" + "x" * 300, {}, None),  # 414
        ("POST", f"{BASE}/events", admin, {"title": "Headers", "start_date": "2027-01-01 10:00",
                                           "end_date": "2027-01-01 11:00"}),  # 201
        ("OPTIONS", f"{BASE}/events", {"Origin": "https://x.example"}, None),
        ("GET", "/media/jazz-night.png", {}, None), ("GET", "/media/nope.png", {}, None),
        ("GET", f"{BASE}/events", auth("administrator", "bad"), None),  # 401
        ("GET", f"{BASE}/events", auth("administrator", "bad"), None),  # 401
        ("GET", f"{BASE}/events", auth("administrator", "bad"), None),  # 429
    ]
    statuses = set()
    for method, url, headers, body in requests:
        response = client.open(url, method=method, headers=headers, json=body)
        statuses.add(response.status_code)
        for name, value in SECURITY_HEADERS.items():
            assert name in response.headers, (method, url, response.status_code, name)
            if value:
                assert response.headers[name] == value
        assert response.headers.get("Server", "").lower().find("python") < 0
    assert {200, 201, 304, 400, 401, 404, 405, 413, 414, 429} <= statuses, statuses
    app.extensions["calendar"].close()
    print("\nRELIABILITY security-headers: " + json.dumps(
        {"requests": len(requests), "statuses": sorted(statuses)}))


def test_security_headers_on_an_unexpected_error(config: dict, monkeypatch) -> None:
    app = create_app(config)
    from calendar_app.catalog import lists

    monkeypatch.setattr(lists, "answer", lambda *a, **k: 1 / 0)
    response = app.test_client().get(f"{BASE}/events")
    _error_shape(response, 500)
    for name in SECURITY_HEADERS:
        assert name in response.headers
    app.extensions["calendar"].close()


# -- CORS ----------------------------------------------------------------------------------
EDITOR_SITE = "https://editor.example.org"
ELSEWHERE = "https://elsewhere.example"


def test_cors_reads_from_anywhere_without_credentials(config: dict) -> None:
    config["CORS_ORIGINS"] = (EDITOR_SITE,)
    app = create_app(config)
    client = app.test_client()
    response = client.get(f"{BASE}/events", headers={"Origin": ELSEWHERE})
    assert response.status_code == 200
    assert response.headers.get("Access-Control-Allow-Origin") == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers
    # A preflight for a write from elsewhere does not allow the write.
    pre = client.options(f"{BASE}/events", headers={
        "Origin": ELSEWHERE, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert "POST" not in pre.headers.get("Access-Control-Allow-Methods", "")
    assert pre.headers.get("Access-Control-Allow-Credentials") != "true"
    app.extensions["calendar"].close()


def test_cors_writes_only_from_configured_origins(config: dict, content: Path, auth) -> None:
    config["CORS_ORIGINS"] = (EDITOR_SITE,)
    app = create_app(config)
    client = app.test_client()
    admin = auth("administrator")
    repo = content.parent
    commits = git(repo, "rev-list", "--count", "HEAD")
    body = {"title": "Cross-site", "start_date": "2027-01-01 10:00",
            "end_date": "2027-01-01 11:00"}
    for method, url in (("POST", f"{BASE}/events"), ("PATCH", f"{BASE}/events/100"),
                        ("PUT", f"{BASE}/events/100"), ("DELETE", f"{BASE}/events/100"),
                        ("POST", f"{BASE}/tags"), ("GET", f"{BASE}/events/100?_method=DELETE")):
        response = client.open(url, method=method, json=body,
                               headers={**admin, "Origin": ELSEWHERE})
        _error_shape(response, 403)
        assert response.headers.get("Access-Control-Allow-Credentials") != "true"
    assert git(repo, "rev-list", "--count", "HEAD") == commits, "a cross-site write landed"
    # From the configured origin, with credentials: allowed, and said so.
    response = client.post(f"{BASE}/events", json=body, headers={**admin, "Origin": EDITOR_SITE})
    assert response.status_code == 201, response.get_json()
    assert response.headers["Access-Control-Allow-Origin"] == EDITOR_SITE
    assert response.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in response.headers.get("Vary", "")
    pre = client.options(f"{BASE}/events", headers={
        "Origin": EDITOR_SITE, "Access-Control-Request-Method": "POST"})
    assert pre.status_code in (200, 204)
    assert "POST" in pre.headers.get("Access-Control-Allow-Methods", "")
    app.extensions["calendar"].close()


# -- login throttling ------------------------------------------------------------------------
def test_repeated_failed_logins_get_429(config: dict, auth, monkeypatch) -> None:
    config.update(LOGIN_MAX_FAILURES=3, LOGIN_WINDOW=2)
    app = create_app(config)
    client = app.test_client()
    attacker = {"REMOTE_ADDR": "198.51.100.7"}
    for _ in range(3):
        response = client.get(f"{BASE}/events", headers=auth("administrator", "guess"),
                              environ_base=attacker)
        _error_shape(response, 401)
    response = client.get(f"{BASE}/events", headers=auth("administrator", "guess"),
                          environ_base=attacker)
    _error_shape(response, 429)
    assert int(response.headers["Retry-After"]) >= 1
    # Locked out even with the right password, and for unknown users too.
    response = client.post(f"{BASE}/events", json={"title": "x"},
                           headers=auth("administrator"), environ_base=attacker)
    _error_shape(response, 429)
    response = client.get(f"{BASE}/events", headers=auth("nobody", "x"), environ_base=attacker)
    _error_shape(response, 429)
    # Anonymous reads from that client still work; other clients are not affected.
    assert client.get(f"{BASE}/events", environ_base=attacker).status_code == 200
    other = client.get(f"{BASE}/events/100", headers=auth("administrator"),
                       environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert other.status_code == 200
    # After the window the right password works again: the guard's clock moved on by
    # more than the window (instead of the test waiting it out).
    from types import SimpleNamespace

    from calendar_app.http import guard

    monotonic = time.monotonic
    monkeypatch.setattr(guard, "time", SimpleNamespace(monotonic=lambda: monotonic() + 2.2))
    again = client.get(f"{BASE}/events/100", headers=auth("administrator"),
                       environ_base=attacker)
    assert again.status_code == 200
    app.extensions["calendar"].close()


def test_passwords_are_salted_slow_hashes_compared_in_constant_time(
        config: dict, users: dict[str, str], tmp_path: Path, monkeypatch) -> None:
    from calendar_app.store import users as users_module
    from calendar_app.store.users import UserStore

    text = (tmp_path / "users.yaml").read_text()
    for password in users.values():
        assert password not in text and password.replace(" ", "") not in text
    store = UserStore(tmp_path / "same.yaml")
    one, two = store.add("a"), store.add("b")
    raw = (tmp_path / "same.yaml").read_text()
    hashes = re.findall(r"scrypt\$[^\s']+", raw)
    assert len(hashes) == 2 and hashes[0] != hashes[1]  # salted
    assert one not in raw and two not in raw
    calls = []
    real = hmac.compare_digest
    monkeypatch.setattr(users_module.hmac, "compare_digest",
                        lambda a, b: calls.append(1) or real(a, b))
    started = time.perf_counter()
    assert store.authenticate("a", "wrong") is None
    slow = time.perf_counter() - started
    assert calls, "password check does not use hmac.compare_digest"
    assert slow > 0.005, f"hash too fast to be a slow hash ({slow:.4f}s)"


# -- roles (spec 6.3) -------------------------------------------------------------------------
def _event(client, headers, **extra):
    body = {"title": "Role test", "start_date": "2027-01-01 10:00:00",
            "end_date": "2027-01-01 11:00:00", **extra}
    return client.post(f"{BASE}/events", json=body, headers=headers)


def test_roles_match_the_plugin(client, auth) -> None:
    admin, editor = auth("administrator"), auth("editor")
    author, contributor, subscriber = auth("author"), auth("contributor"), auth("subscriber")
    admins = _event(client, admin).get_json()["id"]
    checks = 0

    def expect(response, status: int) -> dict:
        nonlocal checks
        checks += 1
        if status >= 400:
            return _error_shape(response, status)
        assert response.status_code == status, response.get_json()
        return response.get_json()

    # Anonymous and subscriber: no writes.
    expect(_event(client, {}), 401)
    expect(_event(client, subscriber), 403)
    expect(client.post(f"{BASE}/venues", json={"venue": "S"}, headers=subscriber), 403)
    # Contributor: drafts only, own records only, no terms.
    own = expect(_event(client, contributor, status="publish"), 201)
    assert own["status"] == "pending"
    own_draft = expect(_event(client, contributor, status="draft"), 201)
    assert own_draft["status"] == "draft"
    expect(client.patch(f"{BASE}/events/{own_draft['id']}", json={"title": "Mine"},
                        headers=contributor), 200)
    published = expect(client.patch(f"{BASE}/events/{own_draft['id']}",
                                    json={"status": "publish"}, headers=contributor), 200)
    assert published["status"] == "pending"
    expect(client.patch(f"{BASE}/events/{admins}", json={"title": "No"}, headers=contributor),
           403)
    expect(client.delete(f"{BASE}/events/{admins}", headers=contributor), 403)
    expect(client.post(f"{BASE}/categories", json={"name": "C1"}, headers=contributor), 403)
    expect(client.post(f"{BASE}/tags", json={"name": "T1"}, headers=contributor), 403)
    # A contributor's event once published by an editor is no longer theirs to edit.
    expect(client.patch(f"{BASE}/events/{own_draft['id']}", json={"status": "publish"},
                        headers=editor), 200)
    expect(client.patch(f"{BASE}/events/{own_draft['id']}", json={"title": "Again"},
                        headers=contributor), 403)
    expect(client.delete(f"{BASE}/events/{own_draft['id']}", headers=contributor), 403)
    # Author: publishes and edits own events, not others'; categories yes, tags no.
    mine = expect(_event(client, author, status="publish"), 201)
    assert mine["status"] == "publish"
    expect(client.patch(f"{BASE}/events/{mine['id']}", json={"title": "Author's"},
                        headers=author), 200)
    expect(client.patch(f"{BASE}/events/{admins}", json={"title": "No"}, headers=author), 403)
    expect(client.delete(f"{BASE}/events/{admins}", headers=author), 403)
    expect(client.post(f"{BASE}/categories", json={"name": "Author cat"}, headers=author), 201)
    expect(client.post(f"{BASE}/tags", json={"name": "Author tag"}, headers=author), 403)
    expect(client.delete(f"{BASE}/events/{mine['id']}", headers=author), 200)
    # Editor: everything, others' records included.
    expect(client.patch(f"{BASE}/events/{admins}", json={"title": "Edited"}, headers=editor),
           200)
    expect(client.post(f"{BASE}/tags", json={"name": "Editor tag"}, headers=editor), 201)
    expect(client.delete(f"{BASE}/events/{admins}", headers=editor), 200)
    # By-slug writes check the permission on that record (design decision).
    slug = client.get(f"{BASE}/events/100").get_json()["slug"]
    expect(client.patch(f"{BASE}/events/by-slug/{slug}", json={"title": "No"},
                        headers=contributor), 403)
    print("\nRELIABILITY roles: " + json.dumps({"checks": checks}))


# -- limits ------------------------------------------------------------------------------------
def test_limits_are_configurable_and_answered_in_error_shape(config: dict, auth,
                                                             content: Path) -> None:
    config.update(MAX_CONTENT_LENGTH=2048, MAX_QUERY_LENGTH=300, MAX_INCLUDE_IDS=5)
    app = create_app(config)
    client = app.test_client()
    admin = auth("administrator")
    commits = git(content.parent, "rev-list", "--count", "HEAD")
    response = client.post(f"{BASE}/events", json={"title": "x", "description": "d" * 4000},
                           headers=admin)
    _error_shape(response, 413)
    response = client.post(f"{BASE}/events", data="x" * 5000, headers={
        **admin, "Content-Type": "application/x-www-form-urlencoded"})
    _error_shape(response, 413)
    assert git(content.parent, "rev-list", "--count", "HEAD") == commits
    _error_shape(client.get(f"{BASE}/events?search=" + "q" * 400), 414)
    assert client.get(f"{BASE}/events?search=" + "q" * 200).status_code == 200
    # Headers, all together (name, value, ": " and CRLF each): 431.
    _error_shape(client.get(f"{BASE}/events", headers={"X-Big": "h" * 17000}), 431)
    _error_shape(client.get(f"{BASE}/events", headers={
        f"X-Part-{i}": "h" * 1000 for i in range(17)}), 431)
    assert client.get(f"{BASE}/events", headers={"X-Big": "h" * 15000}).status_code == 200
    _error_shape(client.get(f"{BASE}/events?include=1,2,3,4,5,6"), 400)
    assert client.get(f"{BASE}/events?include=1,2,3,4,5").status_code == 200
    _error_shape(client.get(f"{BASE}/categories?include=1,2,3,4,5,6"), 400)
    # per_page above the calendar's maximum is reduced to it, as the plugin does (spec
    # 3.3); invalid values are the plugin's 400.
    big = client.get(f"{BASE}/events?per_page=1000&start_date=2000-01-01&end_date=2100-01-01")
    assert big.status_code == 200 and len(big.get_json()["events"]) == 50
    _error_shape(client.get(f"{BASE}/events?per_page=-1"), 400)
    app.extensions["calendar"].close()
    # The maximum is a calendar setting.
    settings = content / "calendar.yaml"
    settings.write_text(settings.read_text().replace("max_per_page: 50", "max_per_page: 7"))
    app = create_app(config)
    small = app.test_client().get(f"{BASE}/events?per_page=20&start_date=2000-01-01"
                                  "&end_date=2100-01-01")
    assert small.status_code == 200 and len(small.get_json()["events"]) == 7
    app.extensions["calendar"].close()


def test_rate_limit_per_client(config: dict) -> None:
    config.update(RATE_LIMIT=5)
    app = create_app(config)
    client = app.test_client()
    one, two = {"REMOTE_ADDR": "198.51.100.1"}, {"REMOTE_ADDR": "198.51.100.2"}
    for _ in range(5):
        assert client.get(f"{BASE}/events", environ_base=one).status_code == 200
    response = client.get(f"{BASE}/events", environ_base=one)
    _error_shape(response, 429)
    assert int(response.headers["Retry-After"]) >= 1
    assert client.get(f"{BASE}/events", environ_base=two).status_code == 200
    app.extensions["calendar"].close()


def test_limits_are_documented() -> None:
    """Issue 6.6: the limits are documented (README or docs/)."""
    text = "\n".join(p.read_text() for p in [REPO_ROOT / "README.md",
                                              *(REPO_ROOT / "docs").glob("*.md")]
                     if p.name != "reliability.md")
    for key in ("MAX_CONTENT_LENGTH", "MAX_QUERY_LENGTH", "MAX_HEADER_BYTES",
                "MAX_INCLUDE_IDS", "RATE_LIMIT", "LOGIN_MAX_FAILURES", "LOGIN_WINDOW", "CORS_ORIGINS"):
        assert key in text, f"{key} is not documented"


@pytest.fixture
def _unused_now() -> object:  # keeps NOW imported for readers comparing with conftest
    return NOW


def test_a_hash_names_a_cost_other_than_the_default_and_is_checked_at_it(
        tmp_path: Path) -> None:
    from calendar_app.store.users import UserStore

    cheap = UserStore(tmp_path / "users.yaml", hash_n=16)
    password = cheap.add("a")
    assert "scrypt:16$" in (tmp_path / "users.yaml").read_text()
    # Another store at the production cost still checks it at the cost it names.
    assert UserStore(tmp_path / "users.yaml").authenticate("a", password) is not None
    assert UserStore(tmp_path / "users.yaml").authenticate("a", "wrong") is None
    text = (tmp_path / "users.yaml").read_text()
    for bogus in ("scrypt:3$", "scrypt:0$", "scrypt:x$", "scrypt:1048576$", "bcrypt$"):
        (tmp_path / "users.yaml").write_text(text.replace("scrypt:16$", bogus))
        assert UserStore(tmp_path / "users.yaml").authenticate("a", password) is None
