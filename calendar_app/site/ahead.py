"""What a cold build makes ahead, in a forked child while it plans: planning is serial
and the other core would wait. The builder keeps what the child made when its plan is
done (the child stops then); the rest is made while rendering, as before, the same
function of the same model either way.

First each listed event's list item, cut into its `render.ItemShape`: every render
process rendered every listed event's item once (10,000 renders of ~0.14 ms in each
process at 10,000 events); a shape made here, set on the view before they fork, spares
that in all of them. Then the VEVENTs the stash lacks (each is made once anyway: here
it is off the render processes' time).
"""

from __future__ import annotations

from collections.abc import Callable

from jinja2 import TemplateError

from ..store import parallel
from .pages import Pages
from .render import ItemShape
from .vevents import Vevents

AHEAD_MIN = 1000  # events; a fork and the pickled results cost ~20 ms
# The items as list pages ask for them (_macros.html's event_list), on a page two
# folders deep: each item's link to its event climbs to the root, so it has a shape.
ITEMS = ('{% from "_macros.html" import event_item with context %}'
         '{% for e in events %}{{ cached_item(e, "h3", event_item) }}{% endfor %}')
ITEMS_PAGE = "category/items/index.html"
RUN = 64  # items rendered between two looks at stopped()


def start(pages: Pages, vevents: Vevents) -> Callable[[], None]:
    """Start the child; the function returned stops it and keeps what it made (call
    it once, before rendering). Not worth a fork for a small calendar."""
    model = pages.model
    if len(model.events) < AHEAD_MIN:
        return lambda: None
    listed = model.listed

    def work(stopped: Callable[[], bool]) -> tuple[dict[int, ItemShape], dict]:
        return item_shapes(pages, stopped), vevents.missing(stopped)

    wait = parallel.start(work)

    def keep() -> None:
        made = wait()
        if made is None:
            return
        shapes, made_vevents = made
        for index, shape in shapes.items():
            view = listed[index]
            if view.kept_item is None:
                view.kept_item = shape
        vevents.stash.update(made_vevents)
    return keep


def item_shapes(pages: Pages, stopped: Callable[[], bool]) -> dict[int, ItemShape]:
    """The shapes of the listed events' items (by their place in `model.listed`),
    rendered as list pages render them until `stopped()`. No shape for an item whose
    other parts climb to the root too (a local thumbnail): it is rendered where asked."""
    listed = pages.model.listed
    template = pages.env.from_string(ITEMS)
    for start in range(0, len(listed), RUN):
        if stopped():
            break
        try:
            pages.render(template, ITEMS_PAGE, events=listed[start:start + RUN])
        except TemplateError:  # a user's _macros.html without our macro: none ahead
            break
    return {i: e.kept_item for i, e in enumerate(listed) if e.kept_item is not None}
