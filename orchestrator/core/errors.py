"""Errors a user can act on, and the exit codes they end the command with.

Anything raised as a UserError reaches the terminal as one line, never as a
traceback: the message names the problem and what to do about it. The exit code
says which kind it was (docs/development.md, "Exit codes"):

- 2 (`BAD_INPUT`): the input or the set-up is wrong: an option, a file, a tool
  that is not installed. Running again unchanged fails the same way.
- 1 (`RUN_FAILED`): the run itself failed: a tool or a host failed, a cloud was
  out of reach, another sweep holds the folder. Running again may succeed.
"""

BAD_INPUT = 2
RUN_FAILED = 1


class UserError(Exception):
    """A problem with the user's input or environment, shown as one line."""

    exit_code = BAD_INPUT


class RunFailure(UserError):
    """A failure of the run, not of its input (a tool, a host, the network): one line, exit 1."""

    exit_code = RUN_FAILED


def missing_extra(extra: str, error: ImportError) -> UserError:
    """The one-line error for a library of an optional part (pyproject's extras) that is
    not installed, naming the extra that brings it."""
    name = (error.name or "a library").split(".")[0]
    return UserError(
        f"{name} is not installed: it comes with the [{extra}] extra: "
        f"pip install 'interregion[{extra}]'"
    )
