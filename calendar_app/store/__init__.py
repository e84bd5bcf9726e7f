"""The record store: the YAML tree, its git history, the users file."""
