"""Every ``ranktop`` command in the README's and docs' code blocks is one the real argument
parsers take (parsed, never run)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from ranktop.tui.cli import flags
from ranktop.tui.cli.simulate import simulate_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
PROGRAM = re.compile(r"^(?:\S*/)?ranktop$")  # ranktop, .venv/bin/ranktop
SHELL_ENDS = {"|", "||", "&", "&&", ";", ">", ">>", "<", "2>", "2>&1"}
PARSERS = {"report": flags.report_parser, "check-config": flags.check_config_parser,
           "init": flags.init_parser, "rules": flags.rules_parser, "open": flags.open_parser,
           "jobs": flags.jobs_parser,
           "simulate": simulate_parser}


def test_every_subcommand_has_its_parser_here():
    assert set(PARSERS) == set(flags.SUBCOMMANDS)


def commands(text: str) -> list[list[str]]:
    """The argument lists of every ranktop command in ``text``'s code blocks."""
    found = []
    for block in FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            for words in _commands_of(line):
                found.append(words)
    return found


def _commands_of(line: str) -> list[list[str]]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, "#"
    try:
        words = list(lexer)
    except ValueError:  # not a shell line (a heredoc's YAML, prose)
        return []
    found, current = [], []
    for word in [*words, ";"]:
        if word in SHELL_ENDS or set(word) <= set("|&;<>"):
            if current and PROGRAM.match(current[0]):
                found.append(current[1:])
            current = []
        else:
            current.append(word)
    return found


def parse(args: list[str]) -> None:
    """Parse ``args`` as ranktop's main() would; SystemExit(2) for an invalid one."""
    if args and args[0] in PARSERS:
        PARSERS[args[0]]().parse_args(args[1:])
    else:
        flags.console_parser().parse_args(args)


def every_command() -> list[tuple[str, list[str]]]:
    return [(page.name, args) for page in PAGES for args in commands(page.read_text())]


def test_the_readme_shows_ranktop_commands() -> None:
    assert len(every_command()) >= 10
    assert ["--demo"] in [args for _, args in every_command()]


@pytest.mark.parametrize(("page", "args"), every_command(),
                         ids=lambda value: " ".join(value) if isinstance(value, list) else value)
def test_each_command_is_a_valid_invocation(page: str, args: list[str], capsys) -> None:
    try:
        parse(args)
    except SystemExit as stop:
        assert stop.code in (0, None), f"{page}: ranktop {shlex.join(args)}: " + (
            capsys.readouterr().err)


def test_a_planted_bad_flag_is_caught(capsys) -> None:
    page = "```sh\nranktop --prometheus http://p:9090 --jobb llama  # typo\n```\n"
    (args,) = commands(page)
    with pytest.raises(SystemExit) as stop:
        parse(args)
    assert stop.value.code == 2 and "--jobb" in capsys.readouterr().err
    bad_subcommand = commands("```\nranktop check-config --no-such-flag\n```\n")
    with pytest.raises(SystemExit):
        parse(bad_subcommand[0])
