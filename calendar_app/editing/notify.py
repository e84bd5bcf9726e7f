"""E-mail about submissions: editors hear of a new one, the submitter of the decision.

Configured by a `smtp:` block in calendar.yaml (host, port, user, from, tls) or the
environment (CALENDAR_SMTP_HOST, _PORT, _USER, _PASSWORD, _FROM, _TLS, which win). The
password is read from the environment only: calendar.yaml is committed to git. Without a
host nothing is sent. Messages go out from a thread, after the request is answered; an
SMTP failure is logged and never fails the request.
"""

from __future__ import annotations

import logging
import os
import smtplib
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from ..model.formats import digits

log = logging.getLogger(__name__)
TIMEOUT = 20.0  # seconds for each SMTP conversation
_TLS_MODES = ("starttls", "ssl", "none", "")


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int = 25
    user: str = ""
    password: str = ""
    sender: str = ""
    tls: str = ""  # "ssl", "starttls", "none"; "": ssl on port 465, else starttls if offered


def smtp_settings(calendar_settings: Mapping, environ: Mapping[str, str] = os.environ,
                  ) -> SmtpSettings | None:
    """The SMTP settings in force, or None when no host is configured (or they are bad:
    logged, since mail is an extra that must not stop the calendar)."""
    block = calendar_settings.get("smtp")
    block = block if isinstance(block, Mapping) else {}
    if "password" in block:
        log.warning("calendar.yaml smtp.password is ignored: set CALENDAR_SMTP_PASSWORD")

    def value(key: str) -> str:
        found = environ.get(f"CALENDAR_SMTP_{key.upper()}")
        return str(found if found is not None else block.get(key) or "").strip()

    host = value("host")
    if not host:
        return None
    port_text = value("port") or "25"
    tls = value("tls").lower()
    if not digits(port_text) or not 0 < int(port_text) < 65536 or tls not in _TLS_MODES:
        log.error("SMTP settings ignored: port %r, tls %r", port_text, tls)
        return None
    sender = value("from") or f"calendar@{host}"
    return SmtpSettings(host, int(port_text), value("user"),
                        environ.get("CALENDAR_SMTP_PASSWORD", ""), sender, tls)


def message(settings: SmtpSettings, to: list[str], subject: str, body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = settings.sender
    msg["To"] = ", ".join(to)
    # Header injection: the subject holds a submitted title; no line breaks in it.
    msg["Subject"] = " ".join(subject.split())[:200]
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=settings.sender.rpartition("@")[2] or None)
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(body)
    return msg


def deliver(settings: SmtpSettings, msg: EmailMessage) -> None:
    """Send one message now (raises on failure)."""
    tls = settings.tls or ("ssl" if settings.port == 465 else "")
    if tls == "ssl":
        client: smtplib.SMTP = smtplib.SMTP_SSL(settings.host, settings.port, timeout=TIMEOUT,
                                               context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(settings.host, settings.port, timeout=TIMEOUT)
    with client:
        client.ehlo()
        if tls == "starttls" or (tls == "" and client.has_extn("starttls")):
            client.starttls(context=ssl.create_default_context())
            client.ehlo()
        if settings.user:
            client.login(settings.user, settings.password)
        client.send_message(msg)


class Mailer:
    """Sends from background threads; `wait` joins them (tests, shutdown)."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def send(self, settings: SmtpSettings | None, to: list[str], subject: str,
             body: str) -> None:
        recipients = sorted({a for a in to if a})
        if settings is None or not recipients:
            return
        msg = message(settings, recipients, subject, body)
        thread = threading.Thread(target=_send_logged, args=(settings, msg),
                                  name="calendar-smtp", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def wait(self, timeout: float = TIMEOUT) -> None:
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)


def _send_logged(settings: SmtpSettings, msg: EmailMessage) -> None:
    try:
        deliver(settings, msg)
    except (OSError, smtplib.SMTPException, ValueError) as exc:
        log.error("could not send %r to %s through %s:%s: %s", msg["Subject"], msg["To"],
                  settings.host, settings.port, exc)
