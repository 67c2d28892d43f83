"""Every command has help with an example line, and errors are one line."""

import click
from click.testing import CliRunner

from orchestrator.cli import main


def _walk(group: click.Group, prefix: tuple[str, ...] = ()):
    yield prefix, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _walk(command, (*prefix, name))
        else:
            yield (*prefix, name), command


def test_every_command_has_help_with_an_example():
    runner = CliRunner()
    for path, _command in _walk(main):
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.output, f"{' '.join(path) or 'interregion'} help has no example"
        assert "interregion" in result.output


def test_unknown_command_is_a_short_error():
    result = CliRunner().invoke(main, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output
