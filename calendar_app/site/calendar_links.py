"""Links that put events into people's calendars: subscribing to a feed, and adding one
event. Calendar apps without a link of their own take the `.ics` file (the templates
link it beside these).

None of these services documents its links; the parameters are the ones they have
answered to for years (and that other calendars' "add" menus use).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

from ..model import dates
from .htmltext import html_to_text
from .model import EventView, address_lines

GOOGLE_EVENT = "https://calendar.google.com/calendar/render?"
GOOGLE_SUBSCRIBE = "https://calendar.google.com/calendar/r?cid="
OUTLOOK_COM = "https://outlook.live.com/calendar/0/"
OFFICE_365 = "https://outlook.office.com/calendar/0/"
BODY_LIMIT = 500  # characters of text in a link (long addresses get refused)


@dataclass(frozen=True)
class CalendarLink:
    label: str  # the service, as its users call it
    href: str


def webcal_url(feed_url: str) -> str:
    """The feed's address with the webcal scheme: a calendar app opens it as a
    subscription (and keeps it updated), where a browser would download the file."""
    return "webcal://" + feed_url.split("://", 1)[-1]


def subscribe_links(gettext: Callable[[str], str], feed_url: str,
                    name: str) -> list[CalendarLink]:
    """Subscribing to the feed at `feed_url` (https), called `name` in the app. The
    services' names are their own (not translated); `gettext` translates the rest."""
    webcal = webcal_url(feed_url)
    by_url = query_string({"url": feed_url, "name": name})
    return [CalendarLink(gettext("Apple Calendar and other apps"), webcal),
            # Google takes the webcal address; Outlook the https one.
            CalendarLink("Google Calendar", GOOGLE_SUBSCRIBE + _quote(webcal)),
            CalendarLink("Outlook.com", OUTLOOK_COM + "addfromweb?" + by_url),
            CalendarLink("Office 365", OFFICE_365 + "addfromweb?" + by_url)]


def event_links(event: EventView, page_url: str) -> list[CalendarLink]:
    """Adding one event: a new entry in the service's editor, filled in."""
    outlook = query_string(outlook_query(event, page_url))
    return [CalendarLink("Google Calendar", google_event_url(event, page_url)),
            CalendarLink("Outlook.com", OUTLOOK_COM + "deeplink/compose?" + outlook),
            CalendarLink("Office 365", OFFICE_365 + "deeplink/compose?" + outlook)]


def google_event_url(event: EventView, page_url: str) -> str:
    if event.all_day:  # dates, the end exclusive
        stamp = f"{event.first_day:%Y%m%d}/{event.last_day + dt.timedelta(days=1):%Y%m%d}"
    else:
        stamp = f"{event.start_utc:%Y%m%dT%H%M%SZ}/{event.end_utc:%Y%m%dT%H%M%SZ}"
    query = {"action": "TEMPLATE", "text": event.title_text, "dates": stamp,
             "details": body(event, page_url)}
    location = _location(event)
    if location:
        query["location"] = location
    if not dates.is_offset_name(event.tzname) and event.tzname != "UTC":
        query["ctz"] = event.tzname  # shown in the event's zone
    return GOOGLE_EVENT + query_string(query)


def outlook_query(event: EventView, page_url: str) -> dict[str, str]:
    """Outlook.com's and Office 365's compose form: UTC times ending in Z, or dates for
    an all-day event (the end exclusive, as in iCalendar)."""
    if event.all_day:
        start = event.first_day.isoformat()
        end = (event.last_day + dt.timedelta(days=1)).isoformat()
    else:
        start = f"{event.start_utc:%Y-%m-%dT%H:%M:%SZ}"
        end = f"{event.end_utc:%Y-%m-%dT%H:%M:%SZ}"
    query = {"path": "/calendar/action/compose", "rru": "addevent",
             "subject": event.title_text, "startdt": start, "enddt": end,
             "body": body(event, page_url)}
    location = _location(event)
    if location:
        query["location"] = location
    query["allday"] = "true" if event.all_day else "false"
    return query


def body(event: EventView, page_url: str) -> str:
    """The excerpt, else the description, as text (links keep their addresses), cut to
    BODY_LIMIT at a word, then the event page's address: the rest is a click away (and
    in the .ics). An event page carries it three times."""
    return _body(str(event.excerpt or event.description), page_url)


# Both links of an event page carry the same body: one HTML parse for the two.
@lru_cache(maxsize=64)
def _body(html: str, page_url: str) -> str:
    text = html_to_text(html, page_url)
    if len(text) > BODY_LIMIT:
        cut = text.rfind(" ", 0, BODY_LIMIT)
        text = text[:cut if cut > 0 else BODY_LIMIT].rstrip() + " …"
    return f"{text}\n\n{page_url}" if text else page_url


def query_string(values: dict[str, str]) -> str:
    """Every reserved character percent-encoded, spaces as %20: a "+" is a space to
    some of these services and a plus sign to others."""
    return "&".join(f"{key}={_quote(value)}" for key, value in values.items())


# A page's links repeat the same values: the footer's feed on every page, an event's
# body in two links, a venue's address in all its events'. urllib's quoting is a loop
# in Python, a tenth of a 10,000-event build before this cache.
@lru_cache(maxsize=4096)
def _quote(value: str) -> str:
    return quote(value, safe="")


def _location(event: EventView) -> str:
    return ", ".join(address_lines(event.venue, with_name=True)) if event.venue else ""
