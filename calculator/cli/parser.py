"""The command line: ``python -m calculator COMMAND``.

Commands: turn, sheets, gpus, records, presets, compare, models, fit, measurements import, prefix,
bench, profile, hybrid, growth, ttl, schemas, deploy.

Every command prints a readable table, or JSON with ``--json`` (money and rates as JSON numbers).
Bad input exits with status 2 and one line naming the flag or field and what is allowed; a
traceback is a bug. A reader that stops early (``| head``) ends the command quietly, status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, cast

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError
from calculator.catalog.download import shown_text
from calculator.cli import flags, words
from calculator.errors import InputError

__all__ = ["COMMAND_MODULES", "build_parser", "main", "without_collection"]

# Each module under calculator/cli/ that registers commands, in the order --help lists them, and its
# registering function. A module is imported only when its commands are built: a run builds the one
# that registers its command, so `turn` never imports what `bench` or `profile` compute with (HTTP
# clients, pandas), which took most of its start-up.
_REGISTRARS = (
    ("turn", "add_turn_parser"),
    ("catalog", "add_catalog_parsers"),
    ("capacity", "add_capacity_parsers"),
    ("prefix", "add_prefix_parser"),
    ("bench", "add_bench_parser"),
    ("plan", "add_plan_parsers"),
    ("extras", "add_ttl_parser"),
    ("compare", "add_compare_parser"),
    ("deploy", "add_deploy_parser"),
    ("estimate", "add_estimate_parser"),
)

COMMAND_MODULES: dict[str, str] = {
    "turn": "turn",
    **dict.fromkeys(("sheets", "gpus", "records", "presets", "models", "measurements", "schemas"), "catalog"),
    "fit": "capacity",
    "prefix": "prefix",
    "bench": "bench",
    **dict.fromkeys(("profile", "hybrid", "growth"), "plan"),
    "ttl": "extras",
    "compare": "compare",
    "deploy": "deploy",
    "estimate": "estimate",
}
"""The module that registers each command (tests check it against the whole parser)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command``, only the commands of the module registering it.

    A command's own parser is the same either way, so what it parses, its errors and its ``--help``
    are too; the whole parser is needed where the list of commands shows (``--help``, an unknown one).
    """
    parser = flags.Parser(prog="python -m calculator", description=__doc__.splitlines()[0])
    common = flags.Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    # The data-folder flags are not here: each command adds those it reads (cli/folders.py).
    sub = parser.add_subparsers(dest="command", required=True, parser_class=flags.Parser)
    for module, register in _REGISTRARS:
        if command is None or COMMAND_MODULES.get(command) == module:
            getattr(importlib.import_module(f"calculator.cli.{module}"), register)(sub, common)
    return parser


INTERRUPTED = 130
"""Exit code after Ctrl-C: 128 + SIGINT, as shells report it."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with _any_text_printable(), _terminal_safe():
            code = _run(argv)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        _discard_stdout()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's code for it; every file is written whole or not at all
        print("interrupted (Ctrl-C); nothing was left half-written", file=sys.stderr)
        return INTERRUPTED


@contextlib.contextmanager
def _any_text_printable() -> Iterator[None]:
    """Let stdout write any text as stderr does: a name given in bytes that are not UTF-8 (argv hands
    them over as lone surrogates, and a JSON file may hold them) is shown escaped instead of crashing."""
    errors = getattr(sys.stdout, "errors", None)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is None or errors in (None, "backslashreplace", "surrogateescape"):
        yield
        return
    reconfigure(errors="backslashreplace")
    try:
        yield
    finally:
        with contextlib.suppress(ValueError, OSError):  # closed or broken meanwhile: nothing to restore
            reconfigure(errors=errors)


class _Escaping:
    """A text stream that writes control characters as escapes (line breaks and tabs kept): a model id from a
    remote price list, a record's name from a file, cannot move the cursor, retitle the window or hide text."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(shown_text(text, lines=True))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _terminal_safe() -> Iterator[None]:
    """stdout escaped (:class:`_Escaping`) while a command runs; JSON escapes its own control characters."""
    stream = sys.stdout
    sys.stdout = cast(Any, _Escaping(stream))
    try:
        yield
    finally:
        sys.stdout = stream


@contextlib.contextmanager
def without_collection() -> Iterator[None]:
    """Python's cycle collector off for a start-up's imports, then as it was.

    Importing a command's modules builds its pydantic models: many allocations, so many collections, which
    find nothing to free (a module's objects live as long as the process) and took about 5% of a short
    command's CPU time. The command itself runs with the collector as the caller had it.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _run(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    with without_collection():
        parser = build_parser(argv[0] if argv and argv[0] in COMMAND_MODULES else None)
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # name the command: a flag it does not take may belong to another one
            raise flags.UsageError(
                f"{parser.prog} {args.command}: unrecognized arguments: {' '.join(extras)} "
                f"(see: {parser.prog} {args.command} --help)"
            )
        return int(args.func(args))
    except flags.UsageError as exc:
        _error(str(exc))
    except InputError as exc:
        _error(words.say(exc.problem))
    except ValidationError as exc:  # a model built from the user's values refused one: say which, as a flag
        _error(words.say(words.invalid(exc).problem))
    except DataFileError as exc:
        _error(exc.lines[0] + (f" (and {len(exc.lines) - 1} more)" if len(exc.lines) > 1 else ""))
    return 2


def _error(message: str) -> None:
    """Print ``error: MESSAGE`` as one line, whatever the user's text quoted in it holds.

    A name or path may carry a line break, a terminal escape or an undecodable byte (argv's
    surrogates); each is shown escaped, so the error stays one line and the terminal is left alone.
    """
    shown = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in message)
    print(f"error: {shown}", file=sys.stderr)


def _discard_stdout() -> None:
    """The reader has gone (``| head``): send what is still buffered nowhere, so exiting stays quiet."""
    # in-process callers may have no real file behind stdout
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
