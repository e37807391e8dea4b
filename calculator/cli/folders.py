"""The data-folder flags (``--sheets``, ``--gpu-specs``, ``--records``, ``--models``).

Each command declares the catalogues it reads with :func:`add_data_folders`, so a flag it would ignore
is refused by argparse instead of silently leaving the bundled data in place. A folder that is missing,
is a file, or holds no ``*.yaml`` is refused when the flag is read: the user meant their own data, and
falling back to the bundled folder (or to no records at all) would answer a different question.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from calculator.cli.flags import UsageError, echo

__all__ = ["DATA_FOLDERS", "Unread", "add_data_folders", "data_folder", "refuse_unread"]

DATA_FOLDERS: dict[str, tuple[str, str]] = {
    "sheets": ("--sheets", "price sheet"),
    "gpu_specs": ("--gpu-specs", "GPU spec"),
    "records": ("--records", "throughput record"),
    "models": ("--models", "model spec"),
}
"""Namespace attribute -> (flag, what its YAML files hold); the attribute is what loaders are given."""


def data_folder(text: str) -> Path:
    """A folder holding at least one ``*.yaml`` data file."""
    path = Path(text)
    shown = text if text.isprintable() and len(text) <= 200 else echo(text)  # a path in full, unless hostile
    try:
        if not path.exists():
            raise argparse.ArgumentTypeError(f"folder {shown} does not exist (leave the flag out for the bundled data)")
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{shown} is a file; give the folder that holds the *.yaml files")
        if not any(path.glob("*.yaml")):
            raise argparse.ArgumentTypeError(f"folder {shown} holds no *.yaml files")
    except OSError as exc:  # a name too long for the file system, a folder that cannot be listed
        raise argparse.ArgumentTypeError(f"cannot read folder {shown}: {exc.strerror or exc}") from None
    return path


class Unread(argparse.Action):
    """A folder flag the command does not read: refused by name, before anything runs.

    Hidden from ``--help``, so its ``metavar`` is free to carry what the folder holds.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *_: object) -> None:
        raise argparse.ArgumentError(self, f"this command reads no {self.metavar}s; leave the flag out")


def add_data_folders(parser: argparse.ArgumentParser, *folders: str) -> None:
    """Give ``parser`` the flags for the catalogues its command reads (keys of :data:`DATA_FOLDERS`).

    The other folder flags are refused with a line naming them (hidden from ``--help``), not left to
    argparse, which could take the folder for a positional argument and complain about that instead.
    """
    unknown = set(folders) - set(DATA_FOLDERS)
    if unknown:
        raise ValueError(f"unknown data folders {sorted(unknown)}; known: {list(DATA_FOLDERS)}")
    for dest, (flag, what) in DATA_FOLDERS.items():
        if dest in folders:
            parser.add_argument(
                flag, dest=dest, type=data_folder, default=None, metavar="DIR", help=f"{what} folder (default: bundled)"
            )
        else:
            parser.add_argument(flag, action=Unread, dest=dest, metavar=what, default=None, help=argparse.SUPPRESS)


def refuse_unread(args: argparse.Namespace, command: str, unread: Iterable[str], needs: str) -> None:
    """Refuse a folder flag this run of ``command`` would not read (``needs``: the flags that make it read)."""
    for dest in unread:
        if getattr(args, dest, None) is not None:
            raise UsageError(f"{command}: {DATA_FOLDERS[dest][0]} is read only {needs}")
