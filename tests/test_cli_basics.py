"""The command line's frame: help texts and exit statuses."""

import pytest

from table.cli import COMMAND_MODULES, main


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in COMMAND_MODULES:
        assert name in out


def test_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2


def test_regression_closed_stdout_pipe_ends_quietly():
    """'dicetable advise ... | head -c 10' said 'error: [Errno 32] Broken pipe' (exit 2) about half the time."""
    import subprocess
    import sys

    argv = [
        sys.executable,
        "-m",
        "table",
        "advise",
        "--rules",
        "yahtzee",
        "--dice",
        "12345",
        "--card",
        '{"yahtzee":50}',
        "--all",
    ]
    for _ in range(2):
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # the reader goes before the command has printed a byte: every write fails
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 141  # 128 + SIGPIPE, as a shell says
        assert err == b""


def test_broken_pipe_in_a_command_with_stdout_not_a_file_is_quiet(monkeypatch, capsys):
    import table.commands.advise as advise

    def cut(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(advise, "run", cut)
    assert main(["advise", "--rules", "yahtzee", "--dice", "12345"]) == 141
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["read", "--foo", "x.jpg"], "dicetable read: unknown option --foo; see dicetable read --help"),
        (["read", "--foo"], "dicetable read: unknown option --foo; see dicetable read --help"),  # not "required"
        (["advise", "--roll", "x"], "dicetable advise: argument --roll: invalid int value: 'x'"),
        (["no-such-command"], "dicetable: unknown command 'no-such-command'; see dicetable --help"),
        (["options", "--rules", "yacht", "--dice", "1,2,3,4,5", "more"], "dicetable options: unexpected argument"),
    ],
)
def test_a_bad_option_or_value_is_one_line_without_the_usage_block(capsys, argv, said):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(said), err
    assert "usage:" not in err


def test_an_abbreviated_option_is_not_called_unknown(capsys):
    with pytest.raises(SystemExit):
        main(["read", "--ann"])  # argparse accepts --ann for --annotate; here its value is missing
    err = capsys.readouterr().err
    assert "argument --annotate: expected one argument" in err and "unknown" not in err


def test_help_of_a_command_keeps_its_usage_and_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["read", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dicetable read") and "--annotate" in out
