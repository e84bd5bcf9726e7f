"""Static site build benchmark: our builder vs Hugo on the same generated events.

    python bench/build_bench.py [--sizes 1000 10000] [--rounds 3] [--keep DIR]

For each size: a content tree is generated (the sample calendar's venues, organizers
and terms, N events with Markdown descriptions), then timed: full builds into empty
folders, cold (no caches) and warm (the caches a build leaves), taking turns with
Hugo rendering the same events with minimal equivalent templates (one page, one .ics
and one .json per event, future events included, a paginated list, category and tag
pages), medians of `--rounds` each; then a no-change rebuild (new process) and an
incremental rebuild after editing one event (in-process, as `--watch` does, and in a
new process). Figures are printed and written to bench/RESULTS.md as its "Static
site" section: wall times, and the CPU time (user + system) of the cold builds and of
Hugo's, which a busy machine moves less than the wall times.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SAMPLE = REPO / "content"
WORDS = ["river", "jazz", "market", "lantern", "quartet", "gallery", "family", "workshop", "poetry", "film", "night", "open", "studio", "garden", "folk", "choir", "harvest", "community", "library", "print", "clay", "swing"]


def generate(root: Path, count: int, seed: int = 7) -> Path:
    content = root / "content"
    for part in ("venues", "organizers", "categories", "tags", "media"):
        shutil.copytree(SAMPLE / part, content / part)
    shutil.copy(SAMPLE / "calendar.yaml", content / "calendar.yaml")
    rng = random.Random(seed)
    venues = sorted(p.stem for p in (SAMPLE / "venues").glob("*.yaml"))
    organizers = sorted(p.stem for p in (SAMPLE / "organizers").glob("*.yaml"))
    categories = sorted(p.stem for p in (SAMPLE / "categories").glob("*.yaml"))
    tags = sorted(p.stem for p in (SAMPLE / "tags").glob("*.yaml"))
    start = dt.datetime(2026, 1, 5, 9, 0)
    hugo = root / "hugo" / "content" / "events"
    hugo.mkdir(parents=True)
    for i in range(count):
        slug = f"event-{i:06d}"
        begin = start + dt.timedelta(hours=rng.randrange(0, 24 * 365 * 3))
        end = begin + dt.timedelta(hours=rng.choice((1, 2, 3, 26)))
        title = " ".join(rng.choice(WORDS) for _ in range(4)).title()
        cats = rng.sample(categories, 2)
        tgs = rng.sample(tags, 2)
        para = " ".join(rng.choice(WORDS) for _ in range(60))
        venue, organizer = rng.choice(venues), rng.choice(organizers)
        description = f"A *{title}* evening. {para}.\n\n**Doors** open early. {para}."
        folder = content / "events" / str(begin.year)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{slug}.yaml").write_text(
            f"id: {10000 + i}\ntitle: {title}\nslug: {slug}\nstatus: publish\n"
            f"date: 2025-12-01 10:00:00\nmodified: 2025-12-02 10:00:00\n"
            f"start_date: {begin:%Y-%m-%d %H:%M:%S}\nend_date: {end:%Y-%m-%d %H:%M:%S}\n"
            f"venue: {venue}\norganizers:\n  - {organizer}\n"
            f"categories:\n" + "".join(f"  - {c}\n" for c in cats) +
            "tags:\n" + "".join(f"  - {t}\n" for t in tgs) +
            f"cost: \"{rng.choice(('Free', '10', '$5 - $15'))}\"\n"
            f"excerpt: {title} at a local venue.\n"
            "description: |\n" + "".join(f"  {line}\n" for line in description.split("\n")))
        # The same pages as ours: one per day and month the event is on, per venue and
        # organizer (Hugo taxonomies), besides categories and tags.
        days = sorted({(begin + dt.timedelta(hours=h)).date().isoformat()
                       for h in range(int((end - begin).total_seconds() // 3600))})
        (hugo / f"{slug}.md").write_text(
            f"---\ntitle: \"{title}\"\ndate: {begin:%Y-%m-%dT%H:%M:%S}-08:00\n"
            f"enddate: \"{end:%Y-%m-%d %H:%M}\"\nsummary: \"{title} at a local venue.\"\n"
            f"categories: [{', '.join(cats)}]\ntags: [{', '.join(tgs)}]\n"
            f"days: [{', '.join(days)}]\nmonths: [{begin:%Y-%m}]\n"
            f"venues: [{venue}]\norganizers: [{organizer}]\n---\n{description}\n")
    write_hugo_scaffold(root / "hugo")
    return content


def write_hugo_scaffold(site: Path) -> None:
    # buildFuture: Hugo skips future-dated pages by default, and most events are ahead.
    # Each event page also gets a .ics and a .json, as ours does.
    (site / "hugo.toml").write_text(
        'baseURL = "https://example.org/"\ntitle = "Bench"\npaginate = 10\n'
        'buildFuture = true\ndisableKinds = ["RSS"]\n'
        '[outputs]\npage = ["HTML", "Calendar", "JSON"]\n'
        '[taxonomies]\ncategory = "categories"\ntag = "tags"\nday = "days"\n'
        'month = "months"\nvenue = "venues"\norganizer = "organizers"\n')
    layouts = site / "layouts" / "_default"
    layouts.mkdir(parents=True)
    head = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}'
            '</title><link rel="stylesheet" href="/style.css"></head><body><main>')
    (layouts / "single.html").write_text(
        head + '<h1>{{ .Title }}</h1><p><time>{{ .Date.Format "Monday, January 2, 2006 '
        '3:04 pm" }}</time> – {{ .Params.enddate }}</p>{{ .Content }}<ul>{{ range '
        '.Params.categories }}<li>{{ . }}</li>{{ end }}</ul></main></body></html>')
    (layouts / "single.ics").write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\n"
        "UID:{{ .File.UniqueID }}@example.org\r\n"
        'DTSTART:{{ .Date.UTC.Format "20060102T150405Z" }}\r\nSUMMARY:{{ .Title }}\r\n'
        "DESCRIPTION:{{ .Summary | plainify }}\r\nURL:{{ .Permalink }}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n")
    (layouts / "single.json").write_text(
        '{{ dict "title" .Title "date" .Date "url" .Permalink "categories" '
        '.Params.categories "tags" .Params.tags "description" .Content | jsonify }}\n')
    item = ('<li><a href="{{ .RelPermalink }}">{{ .Title }}</a> {{ .Date.Format "Jan 2, '
            '2006" }} {{ .Summary }}</li>')
    (layouts / "list.html").write_text(
        head + '<h1>{{ .Title }}</h1><ol>{{ range (.Paginate .Pages.ByDate).Pages }}'
        + item + '{{ end }}</ol></main></body></html>')
    # A day's and a month's page show all their events, as ours do (no pagination).
    for taxonomy in ("days", "months"):
        (site / "layouts" / taxonomy).mkdir(parents=True)
        (site / "layouts" / taxonomy / "term.html").write_text(
            head + '<h1>{{ .Title }}</h1><ol>{{ range .Pages.ByDate }}' + item
            + '{{ end }}</ol></main></body></html>')


def timed(command: list[str], cwd: Path = REPO) -> float:
    return timed_cpu(command, cwd)[0]


def timed_cpu(command: list[str], cwd: Path = REPO) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the command and the processes it
    waited for: our render workers, Hugo's threads). The CPU figure holds up when the
    machine is busy, where the wall figures swing."""
    # Each run starts with nothing left to write back: the last run's 500 MB otherwise
    # slows this one's writes, whichever tool made them.
    os.sync()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench(size: int, keep: Path | None, rounds: int) -> dict[str, float | int]:
    from calendar_app.site import Builder, Options
    from calendar_app.store.locations import default_cache_dir

    root = Path(tempfile.mkdtemp(prefix=f"site-bench-{size}-", dir=keep))
    content = generate(root, size)
    figures: dict[str, float | int] = {"events": size}
    hugo = ["hugo", "--quiet", "-s", str(root / "hugo")]

    def command(out: Path) -> list[str]:
        return [sys.executable, str(REPO / "build.py"), "--content", str(content),
                "--out", str(out), "--base-url", "https://example.org/"]
    # This disk's speed swings 2x within minutes: Hugo and our full builds take turns,
    # each into a new empty folder, and the medians are compared. Cold: no caches at
    # all (parsed records, search index, renderings); warm: those of the cold run.
    cold, warm, hugo_times, cold_cpu, hugo_cpu = [], [], [], [], []
    for turn in range(rounds):
        wall, cpu = timed_cpu([*hugo, "-d", str(root / f"hugo-public-{turn}")])
        hugo_times.append(wall)
        hugo_cpu.append(cpu)
        shutil.rmtree(default_cache_dir(content), ignore_errors=True)
        wall, cpu = timed_cpu(command(root / f"public-cold-{turn}"))
        cold.append(wall)
        cold_cpu.append(cpu)
        warm.append(timed(command(root / f"public-{turn}")))
    figures["full"], figures["full_warm_cache"] = median(cold), median(warm)
    figures["hugo"] = median(hugo_times)
    figures["full_cpu"], figures["hugo_cpu"] = median(cold_cpu), median(hugo_cpu)
    figures["hugo_outputs"] = sum(1 for p in (root / "hugo-public-0").rglob("*") if p.is_file())
    out = root / "public-0"
    build = command(out)
    figures["noop_process"] = timed(build)
    figures["outputs"] = sum(1 for p in out.rglob("*") if p.is_file())
    # An upcoming event: its venue's, organizer's and terms' pages list it too.
    victim = max((content / "events").rglob("*.yaml"))
    victim.write_text(victim.read_text().replace("title: ", "title: Edited ", 1))
    figures["one_edit_process"] = timed(build)
    # In-process, as --watch does: the catalog stays in memory.
    builder = Builder(Options(content=content, out=out, base_url="https://example.org/",
                              cache_dir=None, progress=False))
    builder.build()
    victim.write_text(victim.read_text().replace("title: Edited ", "title: Again ", 1))
    os.sync()
    started = time.perf_counter()
    builder.reader.catalog.refresh([victim.relative_to(content).as_posix()])
    report = builder.build()
    figures["one_edit_watch"] = time.perf_counter() - started
    figures["one_edit_written"] = len(report.written)
    # A second edit: the lists' rendered items (cached per event by the first
    # rebuild) are reused, as in a --watch session that has been running a while.
    victim.write_text(victim.read_text().replace("title: Again ", "title: Third ", 1))
    os.sync()
    started = time.perf_counter()
    builder.reader.catalog.refresh([victim.relative_to(content).as_posix()])
    builder.build()
    figures["second_edit_watch"] = time.perf_counter() - started
    builder.close()
    if keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--keep", type=Path, default=None,
                        help="generate under this folder and keep the trees")
    parser.add_argument("--rounds", type=int, default=3,
                        help="full builds of each kind, Hugo's too (medians reported)")
    parser.add_argument("--no-results", action="store_true",
                        help="do not append to bench/RESULTS.md")
    args = parser.parse_args()
    if shutil.which("hugo") is None:
        sys.exit("hugo is not installed (apt-get install -y hugo)")
    rows = []
    for size in args.sizes:
        figures = bench(size, args.keep, args.rounds)
        print(figures, flush=True)
        rows.append(figures)
    table = [("| events | outputs | full, cold | full, warm cache | no-op rebuild | "
              "1 edit, new process | 1 edit, --watch (written) | 2nd edit, --watch | "
              "Hugo (files) | ratio cold / warm | CPU cold, ours / Hugo's |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in rows:
        table.append(
            f"| {f['events']:,} | {f['outputs']:,} | {f['full']:.2f} s | "
            f"{f['full_warm_cache']:.2f} s | {f['noop_process']:.2f} s | "
            f"{f['one_edit_process']:.2f} s | {f['one_edit_watch']:.2f} s "
            f"({f['one_edit_written']}) | {f['second_edit_watch']:.2f} s | {f['hugo']:.2f} s ({f['hugo_outputs']:,}) | "
            f"{f['full'] / f['hugo']:.1f}x / {f['full_warm_cache'] / f['hugo']:.1f}x | "
            f"{f['full_cpu']:.1f} s / {f['hugo_cpu']:.1f} s ({f['full_cpu'] / f['hugo_cpu']:.1f}x) |")
    text = "\n".join(table)
    print(text)
    if not args.no_results:
        # Appended as a dated run at the end: earlier runs and their hand-written notes
        # stay (replacing the section lost them once).
        results = REPO / "bench" / "RESULTS.md"
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        existing = results.read_text() if results.exists() else "# Benchmark results\n"
        results.write_text(existing.rstrip("\n") + f"\n\n## Static site run, {stamp}\n\n"
                           f"`python bench/build_bench.py`; times are wall clock.\n\n"
                           f"{text}\n")

if __name__ == "__main__":
    main()
