"""Why a `recurrence:` block cannot be used (recurrence.py): the table of whole-sentence
English templates and the error that carries one, kept apart from the rule arithmetic."""

from __future__ import annotations


def N_(message: str) -> str:
    """Marks a message for the catalogs (pybabel's keyword; site.i18n has the same)."""
    return message


# Why a block cannot be used: English templates with `%(name)s` placeholders, filled in
# for `check`, `diff` and the interface, translated on the editing pages (editing/
# language.py reads the values back out of the text). Each is a whole sentence: the
# ones that differ in a word of their own ("or") are messages of their own. Rule texts
# and values arrive quoted as they have always been printed (repr).
MESSAGES = {
    "not-a-date": N_("recurrence %(key)s: %(value)s is not a date like 2027-03-05 19:30:00"),
    "date-not-kept": N_("recurrence %(key)s: %(date)s is outside the dates the calendar "
                        "keeps (%(range)s)"),
    "rule-not-text": N_("recurrence rrule: expected RFC 5545 text such as "
                        "FREQ=WEEKLY;BYDAY=TU"),
    "until-not-kept": N_("recurrence rrule: %(rule)s: UNTIL is not a date the calendar "
                         "keeps (%(range)s)"),
    "rule-with-start": N_("recurrence rrule: %(rule)s: give only the rule; the event's "
                          "start_date is its start"),
    "not-a-rule": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (%(reason)s)"),
    # dateutil's reasons for refusing a rule (_DATEUTIL), worded as our own sentences
    "part-value": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (%(part)s cannot "
                     "be %(value)s)"),
    "part-empty": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (%(part)s has no "
                     "value)"),
    "unknown-part": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (%(part)s is "
                       "not a rule part)"),
    "not-pairs": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (write each part "
                    "as NAME=value, separated by ;)"),
    "no-freq": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (FREQ is missing)"),
    "property": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (%(part)s is not "
                   "a rule; give the RRULE alone)"),
    "setpos": N_("recurrence rrule: %(rule)s is not an RFC 5545 rule (BYSETPOS takes 1 to "
                 "366 or -366 to -1)"),
    "many-rules": N_("recurrence rrule: %(rule)s must be a single rule"),
    "frequency": N_("recurrence rrule: FREQ=%(freq)s is not supported (events repeat daily "
                    "at most often)"),
    "interval": N_("recurrence rrule: %(rule)s: INTERVAL must be 1 or more"),
    "count-part": N_("recurrence rrule: %(rule)s: COUNT must be 1 or more"),
    "time-parts": N_("recurrence rrule: %(rule)s: BYHOUR, BYMINUTE and BYSECOND are not "
                     "supported: an event occurs once a day at most, at its start_date's "
                     "time"),
    "easter": N_("recurrence rrule: %(rule)s: BYEASTER is not part of RFC 5545"),
    "part-freq-1": N_("recurrence rrule: %(rule)s: %(part)s needs FREQ=%(freq)s"),
    "part-freq-2": N_("recurrence rrule: %(rule)s: %(part)s needs FREQ=%(freq)s or "
                      "%(other)s"),
    "part-freq-3": N_("recurrence rrule: %(rule)s: %(part)s needs FREQ=%(freq)s or "
                      "%(other)s or %(third)s"),
    "month": N_("recurrence rrule: %(rule)s: BYMONTH takes months 1 to 12"),
    "until-outside": N_("recurrence rrule: %(rule)s: UNTIL is outside the dates the "
                        "calendar keeps (%(range)s)"),
    "no-such-day": N_("recurrence rrule: %(rule)s gives no date (no such day in those "
                      "months)"),
    "never": N_("recurrence rrule: %(rule)s gives no date in the %(years)s years after the "
                "start"),
    "every": N_("recurrence every: %(every)s should read like '2 weeks', 'day' or 'month'"),
    "every-zero": N_("recurrence every: the interval must be at least 1"),
    "on": N_("recurrence on: %(item)s is not a weekday, 'second tuesday' or a day of the "
             "month"),
    "until-and-count": N_("recurrence: give until or count, not both"),
    "count": N_("recurrence count: %(count)s is not a whole number above 0"),
    "not-a-mapping": N_("recurrence: expected a mapping with rrule or every"),
    "unknown-key": N_("recurrence: unknown key %(key)s (known: %(known)s)"),
    "rule-and-every": N_("recurrence: give rrule or every, not both (%(key)s beside rrule)"),
    "needs-every": N_("recurrence %(key)s: needs every"),
    "no-rule": N_("recurrence: give rrule, every or rdate"),
    "changes-not-a-mapping": N_("recurrence changes: expected original start -> changed "
                                "fields"),
    "change-not-fields": N_("recurrence changes %(when)s: expected fields such as "
                            "cancelled: true or start_date"),
    "change-key": N_("recurrence changes %(when)s: %(name)s cannot change per occurrence "
                     "(one of %(known)s)"),
    "change-cancelled": N_("recurrence changes %(when)s: cancelled must be true or false"),
    "change-empty": N_("recurrence changes %(when)s: %(name)s needs a value"),
    # A field's own message (its type's) about a changed occurrence's value.
    "change-field": N_("recurrence changes %(when)s: %(message)s"),
    "exdate": N_("recurrence exdate %(date)s is not an occurrence of the rule"),
    "change-no-occurrence": N_("recurrence changes %(when)s is not an occurrence of the "
                               "rule"),
    "change-end": N_("recurrence changes %(when)s: end_date is before the start"),
}


class RecurrenceError(ValueError):
    """A recurrence block that cannot be used, worded by MESSAGES[name] with `values`.
    `at` is text of the block to point at (for the line of the report), `key` the
    block's key it is under."""

    # positional-only: a template may name its own values `key` and `name`
    def __init__(self, name: str, key: str = "", at: str = "", /, **values: object) -> None:
        self.name = name
        self.template = MESSAGES[name]
        self.values = {k: str(v) for k, v in values.items()}
        self.message = self.template % self.values
        super().__init__(self.message)
        self.key = key
        self.at = at

    def __reduce__(self) -> tuple:
        # Across a fork (parallel parsing): made without __init__, which takes a name
        # where pickle would give the message; its attributes are its state.
        return (RecurrenceError.__new__, (RecurrenceError, self.message), dict(self.__dict__))
