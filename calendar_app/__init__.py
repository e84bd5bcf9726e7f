"""An events calendar that lives in git."""

from .app import create_app

__all__ = ["create_app"]
