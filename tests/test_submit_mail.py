"""E-mail about submissions (editing/notify.py) through a real SMTP server on the
loopback (aiosmtpd): editors told of a new submission, the submitter of the decision;
an SMTP failure never fails the request; the settings and their precedence."""

from __future__ import annotations

import email
import logging
import socket
from email.message import Message
from pathlib import Path

import pytest
from conftest import sign_in
from submitting import decision, propose

from calendar_app.editing import notify
from calendar_app.http.app import create_app


class Inbox:
    """An aiosmtpd handler keeping every message it is given."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append((list(envelope.rcpt_tos),
                              email.message_from_bytes(envelope.content)))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp(monkeypatch: pytest.MonkeyPatch):
    from aiosmtpd.controller import Controller

    inbox = Inbox()
    port = free_port()  # the controller checks its port by connecting: not 0
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        monkeypatch.setenv("CALENDAR_SMTP_HOST", "127.0.0.1")
        monkeypatch.setenv("CALENDAR_SMTP_PORT", str(port))
        monkeypatch.setenv("CALENDAR_SMTP_FROM", "calendar@example.org")
        yield inbox
    finally:
        controller.stop()


@pytest.fixture
def app(config: dict, signed_users: dict, tmp_path: Path):
    app = create_app(config)
    users = app.extensions["calendar"].users
    users.add("editor", "editor", email="ed@example.org")  # keeps the sign-in password
    users.add("administrator", "administrator", email="boss@example.org")
    return app


def sent(app, inbox: Inbox) -> list[tuple[list[str], Message]]:
    app.extensions["mailer"].wait()
    return inbox.messages


def test_editors_hear_of_a_new_submission(app, client, smtp: Inbox) -> None:
    assert propose(client).status_code == 303
    [(to, msg)] = sent(app, smtp)
    assert to == ["boss@example.org", "ed@example.org"]
    assert msg["Subject"] == "New event submitted: Harbour Lantern Walk"
    assert msg["From"] == "calendar@example.org"
    body = msg.get_payload(decode=True).decode()
    assert "2027-03-05 19:30:00 (Europe/Lisbon)" in body
    assert "http://localhost/admin/pending/" in body
    assert "walker@example.org" not in msg.as_string()  # editors read it in the queue


def test_the_submitter_hears_of_an_approval(app, client, smtp: Inbox) -> None:
    assert propose(client).status_code == 303
    sign_in(client, "editor")
    assert decision(client, 157, "approve").status_code == 303
    to, msg = sent(app, smtp)[-1]
    assert to == ["walker@example.org"]
    assert msg["Subject"] == "Your event was published: Harbour Lantern Walk"
    assert "is now in Riverside Arts & Community Calendar" in msg.get_payload(decode=True).decode()


def test_the_submitter_hears_the_reason_of_a_rejection(app, client, smtp: Inbox) -> None:
    assert propose(client).status_code == 303
    sign_in(client, "editor")
    assert decision(client, 157, "reject", reason="It is a private party.").status_code == 303
    to, msg = sent(app, smtp)[-1]
    assert to == ["walker@example.org"]
    assert msg["Subject"] == "Your event was not published: Harbour Lantern Walk"
    assert "The editors' reason: It is a private party." in msg.get_payload(decode=True).decode()


def test_a_title_cannot_add_headers(app, client, smtp: Inbox) -> None:
    assert propose(client, title="Walk\r\nBcc: victim@example.org").status_code in (303, 400)
    for to, msg in sent(app, smtp):
        assert "victim@example.org" not in to and msg["Bcc"] is None


def test_a_dead_smtp_server_is_logged_and_the_submission_kept(
        app, client, content: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("CALENDAR_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("CALENDAR_SMTP_PORT", str(free_port()))  # nobody listens there
    with caplog.at_level(logging.ERROR, "calendar_app.editing.notify"):
        assert propose(client).status_code == 303
        app.extensions["mailer"].wait()
    assert (content / "events/2027/harbour-lantern-walk.yaml").exists()
    assert any("could not send 'New event submitted: Harbour Lantern Walk'" in r.getMessage()
               for r in caplog.records)


def test_without_a_host_nothing_is_sent(app, client, smtp: Inbox,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CALENDAR_SMTP_HOST")
    assert propose(client).status_code == 303
    assert sent(app, smtp) == []


def test_settings_come_from_calendar_yaml_and_the_environment_wins(
        caplog: pytest.LogCaptureFixture) -> None:
    yaml_block = {"smtp": {"host": "mail.example.org", "port": 587, "user": "cal",
                           "from": "events@example.org", "password": "in git!"}}
    with caplog.at_level(logging.WARNING):
        found = notify.smtp_settings(yaml_block, {})
    assert found == notify.SmtpSettings("mail.example.org", 587, "cal", "",
                                        "events@example.org", "")
    assert "smtp.password is ignored" in caplog.text
    env = {"CALENDAR_SMTP_HOST": "relay.example.net", "CALENDAR_SMTP_PASSWORD": "s3cret",
           "CALENDAR_SMTP_PORT": "465"}
    found = notify.smtp_settings(yaml_block, env)
    assert (found.host, found.port, found.password, found.user) == (
        "relay.example.net", 465, "s3cret", "cal")
    assert notify.smtp_settings({}, {}) is None
    assert notify.smtp_settings({}, {"CALENDAR_SMTP_HOST": "h",
                                     "CALENDAR_SMTP_PORT": "99999"}) is None
    assert notify.smtp_settings({"smtp": "not a block"}, {}) is None
