"""Errors a user can cause and fix: each names the input (flag, field) and what is allowed."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """A value the user gave is not allowed.

    ``field`` names the flag or field (``--prefix-share``, ``workload.hit_rate``) so that the
    command line, the app and the scenario loader can all point at it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")
