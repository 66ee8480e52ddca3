"""Vendored JSON schemas (data files), read with :mod:`importlib.resources`."""
