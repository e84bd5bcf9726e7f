"""The static site builder: pages, iCalendar feeds and JSON snapshots, incrementally."""

from .builder import Builder, Options, Report, build
from .command import register

__all__ = ["Builder", "Options", "Report", "build", "register"]
