"""`import ics` parsing speed (issue 23): a feed of `--events` VEVENTs in Google's
style (bookkeeping properties, an alarm each; one in ten a weekly series with an
override), read by `read_ics`; CPU seconds (`time.process_time`, steadier than wall
time on a loaded machine) and wall seconds. `--compare`: also with every property
handed to the parser (ics_text.without_unread off), in the same run.

    python bench/ics_bench.py [--events 5000] [--profile] [--compare]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calendar_app.importing import ics_reader
from calendar_app.importing.ics import read_ics


def feed(events: int) -> bytes:
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Bench//EN",
           "X-WR-TIMEZONE:Europe/Berlin"]
    for n in range(events):
        day = f"2027{1 + n % 12:02d}{1 + n % 28:02d}"
        out += ["BEGIN:VEVENT", f"UID:bench-{n}@example.org", "DTSTAMP:20261101T120000Z",
                f"DTSTART;TZID=Europe/Berlin:{day}T190000",
                f"DTEND;TZID=Europe/Berlin:{day}T210000",
                f"SUMMARY:Event {n} – Café “Nord” ’s evening",
                "DESCRIPTION:" + "A long description with commas\\, and more text. " * 8,
                f"LOCATION:Hall {n % 50}\\, Hauptstraße {n % 50}\\, Berlin",
                "CATEGORIES:Music,Community", "URL:https://example.org/e/" + str(n),
                "CREATED:20261001T120000Z", "LAST-MODIFIED:20261015T120000Z",
                "SEQUENCE:0", "STATUS:CONFIRMED", "TRANSP:OPAQUE",
                "X-MOZ-GENERATION:2", "BEGIN:VALARM", "ACTION:DISPLAY",
                "DESCRIPTION:This is an event reminder", "TRIGGER:-P0DT0H30M0S",
                "END:VALARM"]
        if n % 10 == 0:
            out.append("RRULE:FREQ=WEEKLY;COUNT=8")
        out.append("END:VEVENT")
        if n % 10 == 0:
            out += ["BEGIN:VEVENT", f"UID:bench-{n}@example.org", "DTSTAMP:20261101T120000Z",
                    f"RECURRENCE-ID;TZID=Europe/Berlin:{day}T190000",
                    f"DTSTART;TZID=Europe/Berlin:{day}T200000",
                    f"DTEND;TZID=Europe/Berlin:{day}T220000",
                    f"SUMMARY:Event {n} (moved)", "END:VEVENT"]
    out.append("END:VCALENDAR")
    return ("\r\n".join(out) + "\r\n").encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    data = feed(args.events)
    if args.compare:
        cut = ics_reader.without_unread
        ics_reader.without_unread = lambda text: text
        cpu = time.process_time()
        read_ics(data, "bench.ics", "Europe/Berlin")
        print(f"every property parsed: {time.process_time() - cpu:.2f} s CPU")
        ics_reader.without_unread = cut
    cpu, wall = time.process_time(), time.perf_counter()
    if args.profile:
        profile = cProfile.Profile()
        batch = profile.runcall(read_ics, data, "bench.ics", "Europe/Berlin")
    else:
        batch = read_ics(data, "bench.ics", "Europe/Berlin")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    events = sum(r.collection == "events" for r in batch.records)
    print(f"{len(data) / 2**20:.1f} MB, {args.events} VEVENTs -> {events} events, "
          f"{len(batch.problems)} problems: {cpu:.2f} s CPU, {wall:.2f} s wall")
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
