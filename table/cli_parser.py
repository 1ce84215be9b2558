"""An argument parser whose mistakes are said in one line (``PROG: what is wrong; see PROG --help``), exit 2.

argparse's own ``error`` prints the whole usage block before its one error line, and a subcommand's unknown
option is reported by the top-level parser ("dicetable: error: unrecognized arguments"), or is hidden behind a
missing-argument error. ``--help`` is untouched. Used by ``dicetable`` and by the scripts in ``benchmarks/``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

#: A token argparse takes for a negative number, not an option (its own ``_negative_number_matcher``).
_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class OneLineParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` that reports a bad option or value in one line on stderr, exit 2.

    ``help_hint`` is the command that shows the full help (default ``PROG --help``); subparsers made with
    ``add_subparsers().add_parser`` are OneLineParsers too (argparse gives them the parent's class).
    """

    def __init__(self, *args, help_hint: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.help_hint = help_hint or f"{self.prog} --help"
        self._given: list[str] = []

    def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Sequence[str] | None = None, namespace=None):
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._sub_parser(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _sub_parser(self, parsed: argparse.Namespace) -> OneLineParser:
        """The parser of the subcommand chosen in `parsed` (or self): it names the options that were unknown."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, OneLineParser):
                    return chosen._sub_parser(parsed)
        return self

    def _unknown_options(self) -> list[str]:
        """The tokens given to this parser that look like options it does not have (nor abbreviates)."""
        if "--" in self._given:
            given = self._given[: self._given.index("--")]
        else:
            given = self._given
        known = list(self._option_string_actions)
        has_commands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        unknown = []
        for token in given:
            if has_commands and not token.startswith("-"):
                break  # the subcommand's own options are its parser's to judge
            if not token.startswith("-") or token == "-" or _NUMBER.match(token):
                continue
            name = token.split("=", 1)[0]
            if not any(option.startswith(name) for option in known):
                unknown.append(name)
        return unknown

    def error(self, message: str) -> NoReturn:
        unknown = self._unknown_options()
        if unknown:  # an unknown option explains the rest (a value it swallowed, a missing argument)
            message = f"unknown option {unknown[0]}"
        elif message.startswith("unrecognized arguments: "):
            message = f"unexpected argument {message.split(': ', 1)[1]!r}"
        else:
            message = re.sub(r"^argument COMMAND: invalid choice: ('[^']*').*", r"unknown command \1", message)
        self.exit(2, f"{self.prog}: {message}; see {self.help_hint}\n")
