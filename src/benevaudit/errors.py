"""Errors a person can act on: entrypoints print their one-line message and exit 2, no traceback.

Three kinds, by what the person has to change:

- :class:`ConfigError`: a value typed on the command line or in a config file (an unknown name,
  a number outside its range, a missing required path);
- :class:`InputError`: a file or data set passed in that cannot be read as what it should be
  (a text file named ``.ckpt``, a truncated lexicon, a label sheet without its columns);
- :class:`DependencyError`: the chosen option needs a package that is not installed.

Each also derives from the built-in error code written before these existed would catch
(``ValueError``, ``RuntimeError``), so narrowing an error never breaks a caller.
"""

from collections.abc import Mapping


class BenevauditError(Exception):
    """Bad input or configuration; the message says what, where, and what was expected."""


class ConfigError(BenevauditError, ValueError):
    """A configuration value that cannot work (unknown name, missing path, impossible size)."""


class InputError(BenevauditError, ValueError):
    """A file or data a user passed that is not what it should be; names the file and the field."""


class DependencyError(BenevauditError, RuntimeError):
    """An optional package the chosen option needs is missing; says how to install it."""


class ServerError(BenevauditError, RuntimeError):
    """A model server that stayed down, refused or timed out past its retries; says which URL
    and how many requests of the call were answered (those are cached, a rerun skips them)."""

    def __init__(self, message: str, done: Mapping[int, object] | None = None) -> None:
        super().__init__(message)
        self.done: dict[int, object] = dict(done or {})   # position in the call -> its answer


class OutputError(BenevauditError, OSError):
    """A run file that could not be written (no space, a file-size limit); nothing torn is left."""
