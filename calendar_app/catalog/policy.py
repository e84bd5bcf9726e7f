"""Who may read what: the read side's one rule, used by single reads, lists, the
representations (which linked records an event embeds) and the builder (an anonymous
reader). Who may write is the service's (`Service.may_edit`, `Service.require`)."""

from __future__ import annotations

from ..model.records import Record
from ..store.users import User


def readable_by_anyone(record: Record) -> bool:
    """What an anonymous reader may read on its own (`may_read(None, record)`):
    published posts and every term (terms have no status). Every static output is
    made for such a reader."""
    return record.status == "publish" or record.resource.is_term


def may_read(user: User | None, record: Record) -> bool:
    if readable_by_anyone(record):
        return True
    if user is None:
        return False
    if record.status == "private":
        return user.can("read_private") or record.get("author") == user.id
    return user.can("edit") and (record.get("author") == user.id
                                 or user.can("edit_others"))
