"""Sync with a shared remote: fetch, merge, push, id leases."""
