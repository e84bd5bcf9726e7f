"""The Jinja2 environment: the user's template folder first, ours behind it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    pass_context,
    select_autoescape,
)
from jinja2.bccache import Bucket, FileSystemBytecodeCache
from jinja2.runtime import Context
from markupsafe import Markup, escape

from ..model.settings import DEFAULT_SETTINGS
from . import memo, paths
from .calendar_links import event_links, subscribe_links
from .i18n import Regional
from .model import EventView

BUNDLED_TEMPLATES = Path(__file__).resolve().parents[2] / "site_templates"
STATIC_PREFIX = "static/"


class CompiledTemplates(FileSystemBytecodeCache):
    """Jinja's compiled templates kept in a folder between builds and processes: a
    template whose source changed (Jinja keeps its checksum) is compiled again. The
    folder only saves work, so a damaged or unwritable file there is a miss, never a
    failed build. `kind` names the environment's files: the site's and the editing
    pages' environments compile differently and may share a folder."""

    def __init__(self, folder: Path, kind: str = "site") -> None:
        super().__init__(str(folder), f"{kind}-%s.jinja")

    @classmethod
    def within(cls, folder: Path, kind: str = "site") -> CompiledTemplates | None:
        """Kept in `folder`, made if missing; None (compile at every build) when it
        cannot be made."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return cls(folder, kind)

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - any damage: compile from the source
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # the folder went away or is read only: the next build compiles again


def make_environment(user_templates: Path | None = None,
                     compiled: Path | None = None) -> Environment:
    """A user folder overrides our templates file by file (ChoiceLoader order). With
    `compiled`, templates compiled once are kept there (CompiledTemplates): compiling
    the ~20 templates is a quarter of a small build's CPU."""
    loaders = [FileSystemLoader(str(user_templates))] if user_templates else []
    loaders.append(FileSystemLoader(str(BUNDLED_TEMPLATES)))
    env = Environment(loader=ChoiceLoader(loaders), extensions=["jinja2.ext.i18n"],
                      bytecode_cache=CompiledTemplates.within(compiled) if compiled else None,
                      autoescape=select_autoescape(["html", "xml"]),
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      # The builder clears the cache when the templates' digest changes.
                      auto_reload=False)
    env.filters.update(url=_url, iso=iso_moment)
    env.globals.update(page_links=page_links, cached_item=cached_item,
                       rendered_once=rendered_once, rendered_for=rendered_for,
                       event_links=event_links)
    # The events whose list items are kept (cached_item): each event's items are a few
    # KB, kept for every event they grew the builder and each worker with every page.
    env.globals["items_kept"] = memo.Recent(dropped=_forget_items)
    # rendered_for's blocks: a few dozen venues and organizers at a few depths, but
    # bounded as the events' caches are, as every event may have organizers of its own.
    env.globals["blocks_kept"] = memo.Recent()
    # rendered_once's blocks: a handful per depth and language, with this environment's
    # templates (a new environment, new templates: nothing kept for the old ones).
    env.globals["once_kept"] = {}
    install_locale(env, Regional(DEFAULT_SETTINGS["locale"]))
    return env


def install_locale(env: Environment, regional: Regional) -> None:
    """The messages and formats of `regional` in every template rendered after this:
    Jinja looks filters and globals up when a template renders, not when it loads."""
    env.install_gettext_translations(regional.translations, newstyle=True)  # type: ignore[attr-defined]
    # Half a million messages a build at 10,000 events: `_` straight to a gettext that
    # remembers each translated message (Jinja's went through two context calls and
    # a Markup format per message, a tenth of a cold build).
    quick = _remembering_gettext(regional.translations.gettext)
    env.globals.update(gettext=quick, _=quick)
    env.filters.update(long_date=regional.long_date, short_date=regional.short_date,
                       clock=regional.clock, month_name=regional.month_name,
                       month_abbr=regional.month_abbr,
                       zone_name=lambda e: regional.zone_name(e.tzname, e.start.year))
    env.globals.update(
        when=partial(when, regional), regional=regional,
        subscribe_links=partial(subscribe_links, regional.gettext))


def _remembering_gettext(translate: Callable[[str], str]) -> Callable[..., str]:
    """Jinja's newstyle gettext (the message a format string, escaped when the template
    autoescapes) with each message's translation, and its text without variables, kept."""
    translated: dict[tuple[str, bool], str] = {}
    plain: dict[tuple[str, bool], str] = {}

    @pass_context
    def gettext(context: Context, message: str, /, **variables: object) -> str:
        key = (message, context.eval_ctx.autoescape)
        if not variables:
            found = plain.get(key)
            if found is not None:
                return found
        text = translated.get(key)
        if text is None:
            text = translate(message)
            text = translated[key] = Markup(text) if key[1] else text
        if variables:
            return text % variables
        found = plain[key] = text % {}  # "%%" is "%", as in Jinja's
        return found

    return gettext


def templates_digest(env: Environment) -> str:
    """One hash over every template and asset visible through the loader."""
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(env.list_templates()):
        source, _, _ = env.loader.get_source(env, name)  # type: ignore[union-attr]
        digest.update(name.encode() + b"\0" + source.encode() + b"\0")
    return digest.hexdigest()


def static_files(env: Environment) -> list[str]:
    return sorted(n for n in env.list_templates() if n.startswith(STATIC_PREFIX))


def static_bytes(env: Environment, name: str) -> bytes:
    source, filename, _ = env.loader.get_source(env, name)  # type: ignore[union-attr]
    # Binary assets (fonts, icons) are read as bytes; text ones as the loader gave them.
    return Path(filename).read_bytes() if filename else source.encode()


@pass_context
def _url(ctx, target: str) -> str:
    """A link to a site output from the page being rendered (or an absolute URL)."""
    if not target or "://" in target or target.startswith(("mailto:", "tel:", "#")):
        return target
    root = ctx.get("absolute_root")
    if root:
        return root + target
    return paths.relative(target, ctx["page_path"])


@pass_context
def cached_item(ctx, event: EventView, heading: str, macro) -> Markup:
    """`macro(event, heading)`, rendered once per event and heading.

    An item shows the event and a link to its page, nothing of the page it is on but
    that link: pages at the same depth share it, pages at other depths take it with
    the link rewritten (when nothing else in it climbs to the root), and --watch keeps
    it until the event changes (model.refresh_event).
    """
    # The event among the recent ones: what else its `items` hold (its search row) is
    # dropped with them as before, whatever serves this item.
    ctx.environment.globals["items_kept"][id(event)] = event
    link = _url(ctx, event.path)
    found = _from_kept(event, heading, link)
    if found is not None:
        return found
    # Not keyed by the macro: each render imports _macros.html afresh, and templates
    # do not change within a build (a change rebuilds all, with new views).
    key = (heading, link)
    found = event.items.get(key)
    if found is None:
        found = event.items[key] = (_derived(event.items, heading, link)
                                    or Markup(macro(event, heading)))
        if heading not in event.items and _movable(found, link):
            event.items[heading] = (link, found)
            if event.kept_item is None:
                event.kept_item = ItemShape(heading, link, found)
    return found


class ItemShape:
    """An event's first movable list item cut at its link to the event and at its
    title's heading tags, so that the item for any depth and heading is a join of
    its pieces: list, category, tag, venue and day pages come in no order of their
    events, so nearly every item asked for (79,600 of 83,300 at 10,000 events) was
    made again from the kept one by string replacement and stored in the bounded
    recent items, each ask ~20 µs. The same bytes as `_moved` then `_reheaded`
    give: a link (`"../…"`, no `<`) and a heading tag cannot overlap. About a KB
    per event shown in lists, as the item it replaces."""

    __slots__ = ("_pieces", "_slots", "_target", "heading", "link")

    def __init__(self, heading: str, link: str, item: Markup) -> None:
        self.heading, self.link = heading, link
        self._target = link.lstrip("./")
        text = str(item)  # Markup's own methods would escape their arguments
        marks = [(f'"{escape(link)}"', "link")]  # one, as _movable checked
        opening, closing = f'<{heading} class="event-title">', f"</{heading}>"
        if text.count(opening) == 1 and text.count(closing) == 1:  # as _reheaded asks
            marks += [(opening, "open"), (closing, "close")]
        found = sorted((text.index(mark), mark, slot) for mark, slot in marks)
        pieces, at = [], 0
        for start, mark, _slot in found:
            pieces.append(text[at:start])
            at = start + len(mark)
        pieces.append(text[at:])
        self._pieces = pieces
        self._slots = [slot for _start, _mark, slot in found]

    # A cold build hands 10,000 of them from a child to the builder (site/ahead.py): a
    # tuple loads faster than the slots' mapping.
    def __getstate__(self) -> tuple:
        return self._pieces, self._slots, self._target, self.heading, self.link

    def __setstate__(self, state: tuple) -> None:
        self._pieces, self._slots, self._target, self.heading, self.link = state

    def made(self, heading: str, link: str) -> Markup | None:
        """The item with `link` to the event and its title under `heading`; None when
        the link is not the same page from another depth, or the heading cannot
        change (the item has other headings of that name)."""
        if not link.startswith("../") or link.lstrip("./") != self._target:
            return None
        if heading != self.heading and len(self._slots) == 1:
            return None
        values = {"link": f'"{escape(link)}"', "open": f'<{heading} class="event-title">',
                  "close": f"</{heading}>"}
        pieces = self._pieces
        out = [pieces[0]]
        for slot, piece in zip(self._slots, pieces[1:]):
            out.append(values[slot])
            out.append(piece)
        return Markup("".join(out))


def _from_kept(event: EventView, heading: str, link: str) -> Markup | None:
    """The item made from the event's first movable one (ItemShape), which outlives
    the recent items: an event dropped from the recent ones had its item rendered
    again, 85 % of the items a 10,000-event build asked for (71,000 of 84,000, a
    sixth of its CPU). One item, about a KB, per event shown in lists."""
    if event.kept_item is None:
        return None
    return event.kept_item.made(heading, link)


def _forget_items(event: EventView) -> None:
    """An event out of the recent ones: its items are dropped, but for `kept_item`."""
    event.items.clear()


def _derived(items: dict, heading: str, link: str) -> Markup | None:
    """The item made from one already rendered: at another depth (the link to the
    event rewritten, `_moved`), under another heading level (a day page's h2, a
    list's h3, a venue's h4: the title's heading changed, `_reheaded`), or both."""
    first = items.get(heading)
    if first is not None:
        return _moved(first, link)
    for key, item in items.items():
        if type(key) is tuple and key[1] == link:
            return _reheaded(item, key[0], heading)
    for other, first in items.items():
        if type(other) is str and type(first) is tuple:
            moved = _moved(first, link)
            return _reheaded(moved, other, heading) if moved is not None else None
    return None


def _reheaded(item: Markup, old: str, heading: str) -> Markup | None:
    """`item` with its one title heading `old` made `heading`; None when the item's
    headings are not that simple (an excerpt with headings of its own)."""
    text = str(item)
    opening, closing = f'<{old} class="event-title">', f"</{old}>"
    if text.count(opening) != 1 or text.count(closing) != 1:
        return None
    return Markup(text.replace(opening, f'<{heading} class="event-title">')
                  .replace(closing, f"</{heading}>"))


def _movable(item: Markup, link: str) -> bool:
    """Whether the item's only way up to the site root is its link to the event (as
    ours): then it serves pages at other depths with that link alone rewritten."""
    item = str(item)  # Markup's own methods would escape their arguments
    return (link.startswith("../") and item.count("../") == link.count("../")
            and item.count(f'"{escape(link)}"') == 1)


def _moved(first: tuple[str, Markup], link: str) -> Markup | None:
    """The item first rendered with `first[0]` as the event link, with `link` instead
    (both up to the root and down the same way); None when that is not the case."""
    old, item = first
    if not link.startswith("../") or old.lstrip("./") != link.lstrip("./"):
        return None
    return Markup(str(item).replace(f'"{escape(old)}"', f'"{escape(link)}"'))


@pass_context
def rendered_once(ctx, template: str, name: str, *args: object) -> Markup:
    """Macro `name` of `template` called with `args`, rendered once per page depth,
    site and language: what every page shows alike (the header, the footer) costs one
    render, not 40,000. The macro sees the page's context, but may read of it only
    `root`, `site` and what the language gives (`_`): the key. Its module is made only
    on a miss (a `{% from ... import ... with context %}` on every page made one a
    page). Keyed by the template object too, which a change of templates replaces."""
    tpl = ctx.environment.get_template(template)
    kept = ctx.environment.globals["once_kept"]
    key = _shared_key(ctx, tpl, name, args)
    found = kept.get(key)
    if found is None:
        found = kept[key] = _call_macro(ctx, tpl, name, args)
    return found


@pass_context
def rendered_for(ctx, records: list, template: str, name: str, *args: object) -> Markup:
    """Macro `name` of `template` called with `records` and `args`, rendered once for
    those records (the same objects: an edited file gives a new Record), those
    arguments (hashable: links already made relative to the page) and the page's
    depth, site and language. As with rendered_once, the macro may read of the page
    only `root`, `site` and what the language gives. An event page's venue and
    organizer sections: the same few dozen records on 10,000 pages."""
    tpl = ctx.environment.get_template(template)
    kept = ctx.environment.globals["blocks_kept"]
    key = (tuple(map(id, records)), *_shared_key(ctx, tpl, name, args))
    found = kept.get(key)
    # The records are kept with the block: no other record takes their id() while
    # the entry lives.
    if found is None:
        found = kept[key] = (tuple(records), _call_macro(ctx, tpl, name, (records, *args)))
    return found[1]


def _shared_key(ctx, tpl: object, name: str, args: tuple) -> tuple:
    """What a block shared by many pages may depend on: the macro, its arguments and
    the page's depth, site and language."""
    return (tpl, name, args, ctx.get("root"), ctx.get("absolute_root"), ctx.get("lang"),
            *ctx["site"].values())


def _call_macro(ctx, tpl: object, name: str, args: tuple) -> Markup:
    module = tpl.make_module(ctx.get_all(), True)  # as an import with context
    return Markup(getattr(module, name)(*args))


PAGER_REACH = 2  # pages shown on each side of the current one


@pass_context
def page_links(ctx, pagination) -> Markup:
    """The pager's numbered links, as `<li>` lines: the first and last pages and those
    near the current one, gaps shown as an ellipsis (a list of 1,000 pages does not
    put 1,000 links on each of them)."""
    number, pages = pagination.number, pagination.pages
    shown = sorted({1, pages, *range(max(1, number - PAGER_REACH),
                                     min(pages, number + PAGER_REACH) + 1)})
    lines, previous = [], 0
    for n in shown:
        if n > previous + 1:
            lines.append('    <li class="gap" aria-hidden="true">…</li>')
        href = escape(_url(ctx, paths.list_page(pagination.base, n)))
        current = ' aria-current="page"' if n == number else ""
        lines.append(f'    <li><a href="{href}"{current}>{n}</a></li>')
        previous = n
    return Markup("\n".join(lines))


def iso_moment(event: EventView, which: str = "start") -> str:
    """Machine-readable value of a <time> element: a date for all-day events."""
    return event.iso_start if which == "start" else event.iso_end


def when(regional: Regional, event: EventView) -> str:
    """The event's date and time as a reader wants it, zone included."""
    _ = regional.gettext
    date, clock = regional.long_date, regional.clock
    if event.all_day:
        if event.multi_day:
            return _("%(first)s – %(last)s, all day") % {
                "first": date(event.first_day), "last": date(event.last_day)}
        return _("%(day)s, all day") % {"day": date(event.first_day)}
    if event.start.date() == event.end.date():
        return _("%(day)s, %(start)s – %(end)s %(zone)s") % {
            "day": date(event.start), "start": clock(event.start), "end": clock(event.end),
            "zone": event.abbr}
    return _("%(first)s, %(start)s %(zone)s – %(last)s, %(end)s %(end_zone)s") % {
        "first": date(event.start), "start": clock(event.start), "zone": event.abbr,
        "last": date(event.end), "end": clock(event.end), "end_zone": event.end_abbr}
