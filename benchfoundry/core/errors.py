"""The one base class of every error a user can cause: a bad spec, a bad input file, an unknown
model, a refused operation. Its message is one line a user can act on; the CLI catches this
class alone and prints that line (no traceback)."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix; `str(error)` says what and how."""
