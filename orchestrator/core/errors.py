"""Errors a user can act on.

Anything raised as a UserError reaches the terminal as one line, never as a
traceback: the message names the problem and what to do about it.
"""


class UserError(Exception):
    """A problem with the user's input or environment, shown as one line."""

    exit_code = 2


def missing_extra(extra: str, error: ImportError) -> UserError:
    """The one-line error for a library of an optional part (pyproject's extras) that is
    not installed, naming the extra that brings it."""
    name = (error.name or "a library").split(".")[0]
    return UserError(
        f"{name} is not installed: it comes with the [{extra}] extra: "
        f"pip install 'interregion[{extra}]'"
    )
