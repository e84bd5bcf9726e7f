"""Generate a calendar content tree for the list benchmarks.

    python bench/gen_calendar.py N DEST [--seed S]

N events spread over 2024-2031 (so the default two-year window holds about a quarter
of them), N/50 venues (two thirds with coordinates), N/100 organizers, 30 categories
(10 with a parent) and 100 tags; descriptions of ~1.5 KB so files weigh ~2 KB like
real ones. Deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

_TEXT = ("river jazz market lantern quartet gallery family workshop poetry film night "
         "garden choir bakery festival harbor mural dance salsa theatre puppet lecture "
         "science chess yoga cycling orchestra folk blues ceramics print zine swing "
         "brunch picnic parade lecture comedy tango opera story museum")
WORDS = _TEXT.split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def generate(n: int, dest: Path, seed: int = 1) -> None:
    rng = random.Random(seed)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "calendar.yaml").write_text(
        "title: Bench calendar\nurl: https://bench.example.org/\ntimezone: UTC\n"
        "per_page: 10\nmax_per_page: 50\n")
    next_id = 1
    cats, tags, venues, orgs = [], [], [], []
    (dest / "categories").mkdir(exist_ok=True)
    for i in range(30):
        slug = f"category-{i}"
        parent = f"\nparent: category-{i % 10}" if i >= 20 else ""
        (dest / "categories" / f"{slug}.yaml").write_text(
            f"id: {next_id}\nname: Category {i} {rng.choice(WORDS)}\nslug: {slug}{parent}\n")
        cats.append(slug)
        next_id += 1
    (dest / "tags").mkdir(exist_ok=True)
    for i in range(100):
        slug = f"tag-{i}"
        (dest / "tags" / f"{slug}.yaml").write_text(
            f"id: {next_id}\nname: Tag {i} {rng.choice(WORDS)}\nslug: {slug}\n")
        tags.append(slug)
        next_id += 1
    (dest / "venues").mkdir(exist_ok=True)
    for i in range(max(5, n // 50)):
        slug = f"venue-{i}"
        geo = (f"geo_lat: {33 + rng.random() * 2:.5f}\ngeo_lng: {-118 + rng.random() * 2:.5f}\n"
               if i % 3 else "")
        (dest / "venues" / f"{slug}.yaml").write_text(
            f"id: {next_id}\nname: Venue {i} {rng.choice(WORDS).title()} Hall\nslug: {slug}\n"
            f"status: publish\ndate: 2023-01-01 10:00:00\naddress: {i} Main Street\n"
            f"city: {rng.choice(['Riverside', 'Corona', 'Norco', 'Ontario'])}\n{geo}")
        venues.append(slug)
        next_id += 1
    (dest / "organizers").mkdir(exist_ok=True)
    for i in range(max(3, n // 100)):
        slug = f"organizer-{i}"
        (dest / "organizers" / f"{slug}.yaml").write_text(
            f"id: {next_id}\nname: Organizer {i}\nslug: {slug}\nstatus: publish\n"
            f"date: 2023-01-01 10:00:00\nemail: org{i}@example.org\n")
        orgs.append(slug)
        next_id += 1
    start0 = dt.datetime(2024, 1, 1)
    span = (dt.datetime(2032, 1, 1) - start0).total_seconds() / 60 / 30
    for i in range(n):
        start = start0 + dt.timedelta(minutes=30 * rng.randrange(int(span)))
        end = start + dt.timedelta(hours=rng.choice((1, 2, 3, 26)))
        year = start.year
        folder = dest / "events" / str(year)
        folder.mkdir(parents=True, exist_ok=True)
        slug = f"event-{i}"
        status = "draft" if i % 50 == 0 else "publish"
        lines = [f"id: {next_id}", f"title: {sentence(rng, 4)[:-1]} {i}", f"slug: {slug}",
                 f"status: {status}", "author: 1",
                 f"date: {(start - dt.timedelta(days=30)):%Y-%m-%d %H:%M:%S}",
                 f"start_date: {start:%Y-%m-%d %H:%M:%S}", f"end_date: {end:%Y-%m-%d %H:%M:%S}",
                 f"venue: {rng.choice(venues)}", f"organizers: [{rng.choice(orgs)}]",
                 f"categories: [{', '.join(rng.sample(cats, 2))}]",
                 f"tags: [{', '.join(rng.sample(tags, 3))}]",
                 f"cost: '{rng.choice((0, 5, 10, 25))}'"]
        if i % 20 == 0:
            lines.append("featured: true")
        if i % 97 == 0:
            lines.append("hide_from_listings: true")
        lines.append(f"excerpt: {sentence(rng, 15)}")
        body = " ".join(sentence(rng, 12) for _ in range(18))
        lines.append(f"description: |\n  {body}")
        (folder / f"{slug}.yaml").write_text("\n".join(lines) + "\n")
        next_id += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    generate(args.n, args.dest, args.seed)


if __name__ == "__main__":
    main()
