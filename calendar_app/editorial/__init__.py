"""Editorial workflow in git: check, calendar-aware diff, collision repair, canonical
formatting, JSON Schemas and scaffolding (`python -m calendar_app check|diff|...`)."""

from .commands import register

__all__ = ["register"]
