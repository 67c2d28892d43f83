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


def one_line(result, *args) -> str:
    assert result.exit_code == 2, (args, result.output)
    assert "Traceback" not in result.output and "Usage:" not in result.output, result.output
    (line,) = result.output.splitlines()
    assert line.startswith("error: "), line
    return line


def test_every_option_click_refuses_is_one_line_naming_the_commands_help():
    runner = CliRunner()
    for path, _command in _walk(main):
        result = runner.invoke(main, [*path, "--no-such-option"], prog_name="interregion")
        line = one_line(result, path)
        assert "No such option '--no-such-option'" in line
        assert line.endswith(f"(see '{' '.join(('interregion', *path))} --help')"), line


def test_a_bad_value_or_a_missing_option_is_one_line():
    runner = CliRunner()
    line = one_line(runner.invoke(main, ["plan", "--duration", "0"]))
    assert line.startswith(
        "error: Invalid value for '--duration': 0 is not in the range 1<=x<=1000000"
    )
    line = one_line(runner.invoke(main, ["publish", "--to", "x"], prog_name="interregion"))
    assert line == "error: Missing option '--site'. (see 'interregion publish --help')"
    line = one_line(runner.invoke(main, ["plna"]))
    assert "No such command 'plna'. Did you mean 'plan'?" in line


def test_a_group_without_a_command_still_shows_its_help():
    for args in ([], ["emulator"]):
        result = CliRunner().invoke(main, args, prog_name="interregion")
        assert "Usage: interregion" in result.output and "Commands:" in result.output


# Options a command takes only to refuse them in one line: never listed in its help.
REFUSED = {
    ("report",): {"--max-regions": "3", "--spread": "globe", "--opt-in": None},
    ("matrix",): {"--max-regions": "3", "--spread": "globe", "--opt-in": None},
    ("study", "tcp"): {
        "--streams": "4",
        "--congestion": "bbr",
        "--window": "4M",
        "--tests": "ping",
        "--measures": "capacity",
    },
}


def test_no_help_lists_an_option_its_command_refuses(tmp_path):
    runner = CliRunner()
    for path, refused in REFUSED.items():
        shown = runner.invoke(main, [*path, "--help"], terminal_width=200).output
        listed = {w for line in shown.splitlines() for w in line.split() if w.startswith("--")}
        for flag, value in refused.items():
            assert flag not in listed, (path, flag)
            args = [*path, flag, *([value] if value else []), "--results", str(tmp_path)]
            if path == ("report",):
                args.append("--all")
            line = one_line(runner.invoke(main, args), path, flag)
            assert flag in line, line
