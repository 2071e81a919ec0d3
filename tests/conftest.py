"""Shared pytest setup: the repository root on sys.path is given by the editable install."""
