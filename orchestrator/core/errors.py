"""Errors a user can act on.

Anything raised as a UserError reaches the terminal as one line, never as a
traceback: the message names the problem and what to do about it.
"""


class UserError(Exception):
    """A problem with the user's input or environment, shown as one line."""

    exit_code = 2
