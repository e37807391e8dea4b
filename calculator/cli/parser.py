"""The command line: ``python -m calculator COMMAND``.

Commands: turn, sheets, gpus, records, presets, compare, models, fit, measurements import, prefix,
bench, profile, hybrid, growth, ttl, schemas.

Every command prints a readable table, or JSON with ``--json`` (money and rates as JSON numbers).
Bad input exits with status 2 and one line naming the flag or field and what is allowed; a
traceback is a bug. A reader that stops early (``| head``) ends the command quietly, status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError
from calculator.cli import bench, capacity, catalog, compare, extras, flags, plan, prefix, turn, words
from calculator.errors import InputError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = flags.Parser(prog="python -m calculator", description=__doc__.splitlines()[0])
    common = flags.Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    # The data-folder flags are not here: each command adds those it reads (cli/folders.py).
    sub = parser.add_subparsers(dest="command", required=True, parser_class=flags.Parser)

    turn.add_turn_parser(sub, common)
    catalog.add_catalog_parsers(sub, common)
    capacity.add_capacity_parsers(sub, common)
    prefix.add_prefix_parser(sub, common)
    bench.add_bench_parser(sub, common)
    plan.add_plan_parsers(sub, common)
    extras.add_ttl_parser(sub, common)
    compare.add_compare_parser(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with _any_text_printable():
            code = _run(argv)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        _discard_stdout()
        return 0


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


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
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
