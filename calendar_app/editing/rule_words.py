"""The rule builder's summary of a repetition ("every Saturday at 18:00") in the
editor's language: day names, lists, times (12 or 24 hours) and dates from CLDR
(Babel), the sentences' shapes from the catalogs, each a whole phrase a translator
can reorder. `check` and `diff` keep English (model/rule_summary.py); both read the
rule through `rule_parts`."""

from __future__ import annotations

import datetime as dt

from ..model.recurrence import rule_texts
from ..model.rule_summary import RuleParts, rule_parts
from ..site.i18n import N_, N_plural, Regional

# "every week" and "every 2 weeks": a unit's own plural in every language.
EVERY = {
    "day": N_plural("every day", "every %(count)s days"),
    "week": N_plural("every week", "every %(count)s weeks"),
    "month": N_plural("every month", "every %(count)s months"),
    "year": N_plural("every year", "every %(count)s years"),
}
# The n-th weekday of a month ("the first Monday"): the ordinal agrees with the day
# (gender, case), so each is a phrase of its own.
NTH = {
    1: N_("the first %(day)s"), 2: N_("the second %(day)s"), 3: N_("the third %(day)s"),
    4: N_("the fourth %(day)s"), 5: N_("the fifth %(day)s"), -1: N_("the last %(day)s"),
    -2: N_("the second to last %(day)s"),
}
NTH_OTHER = N_("the %(day)s number %(n)s")  # rules written by hand (BYDAY=-3MO)
WEEKLY_ON = N_("every %(days)s")  # every week on these days
ON_DAYS = N_("%(every)s on %(days)s")
ON_MONTHDAYS = N_("%(every)s on day %(days)s")
AT = N_("%(rule)s at %(time)s")
TIMES = N_plural("%(rule)s, %(count)s time", "%(rule)s, %(count)s times")
UNTIL = N_("%(rule)s, until %(date)s")
EXTRA = N_plural("%(count)s extra date", "%(count)s extra dates")
ONCE = N_("once")
RULES = N_("%(rules)s; %(more)s")


def summary(block: dict, start: dt.datetime, regional: Regional) -> str:
    """A repetition block's rules in words; extra dates are counted."""
    parts = [rule_summary(rule_parts(text, start), start, regional)
             for text in rule_texts(block)]
    if block.get("rdate"):
        n = len(block["rdate"])
        parts.append(regional.ngettext(*EXTRA, n) % {"count": _number(regional, n)})
    if not parts:
        return regional.gettext(ONCE)
    text = parts[0]
    for more in parts[1:]:
        text = regional.gettext(RULES) % {"rules": text, "more": more}
    return text


def rule_summary(parts: RuleParts, start: dt.datetime, regional: Regional) -> str:
    from babel.lists import format_list

    locale = regional.locale
    wide = locale.days["format"]["wide"]
    names = [wide[day] if not n else
             regional.gettext(NTH.get(n, NTH_OTHER)) % {"day": wide[day], "n": n}
             for day, n in parts.days]
    days = format_list(names, locale=locale) if names else ""
    if parts.unit == "week" and parts.interval == 1 and names:
        rule = regional.gettext(WEEKLY_ON) % {"days": days}
    else:
        rule = regional.ngettext(*EVERY[parts.unit], parts.interval) % {
            "count": _number(regional, parts.interval)}
        if names:
            rule = regional.gettext(ON_DAYS) % {"every": rule, "days": days}
    if parts.monthdays:
        numbers = format_list([_number(regional, d) for d in parts.monthdays], locale=locale)
        rule = regional.gettext(ON_MONTHDAYS) % {"every": rule, "days": numbers}
    rule = regional.gettext(AT) % {"rule": rule, "time": regional.clock(start)}
    if parts.count:
        rule = regional.ngettext(*TIMES, parts.count) % {
            "rule": rule, "count": _number(regional, parts.count)}
    if parts.until:
        rule = regional.gettext(UNTIL) % {"rule": rule, "date": regional.day_month(parts.until, year=True)}
    return rule


def _number(regional: Regional, n: int) -> str:
    from babel.numbers import format_decimal
    return format_decimal(n, locale=regional.locale)
