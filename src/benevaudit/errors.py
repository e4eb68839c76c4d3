"""Errors a person can act on: entrypoints print their one-line message and exit 2, no traceback."""


class BenevauditError(Exception):
    """Bad input or configuration; the message says what, where, and what was expected."""


class ConfigError(BenevauditError, ValueError):
    """A configuration value that cannot work (unknown name, missing path, impossible size)."""
