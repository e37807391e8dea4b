"""Whether a benchmark result's own figures agree with each other.

A serving benchmark states throughput three ways that must agree: requests per second, output
tokens per second, and the totals over the run's duration. When output tokens/s is not requests/s
times the mean output length, or completed requests over the duration is not the request rate, one
of the figures was computed on a different basis (a warm-up counted, tokens re-counted, a rate
averaged over windows rather than over the run) and a plan built on it inherits the doubt. The
record keeps the file's figures and says where they disagree, so the user decides.
"""

from __future__ import annotations

__all__ = ["TOLERANCE", "mismatches"]

TOLERANCE = 0.10
"""Relative difference above which two ways of stating the same throughput disagree: the tools round
and average differently by a few per cent, never by a tenth."""


def _differs(stated: float, implied: float) -> bool:
    return abs(stated - implied) > TOLERANCE * max(abs(stated), abs(implied))


def _g(value: float) -> str:
    return f"{value:,.4g}" if abs(value) < 1e5 else f"{value:,.0f}"


def mismatches(
    *,
    requests_per_s: float | None,
    output_tokens: float | None,
    output_tokens_per_s: float | None,
    completed: float | None = None,
    duration_s: float | None = None,
) -> list[str]:
    """The disagreements between a run's figures, in words (empty when they agree or cannot be checked).

    ``requests_per_s`` and ``output_tokens_per_s`` are the rates the file states, ``output_tokens`` its
    mean output length, ``completed`` and ``duration_s`` its request count and run time.
    """
    found = []
    if requests_per_s and output_tokens and output_tokens_per_s:
        implied = requests_per_s * output_tokens
        if implied > 0 and _differs(output_tokens_per_s, implied):  # a product of tiny figures rounds to 0
            found.append(
                f"output tokens/s: the file states {_g(output_tokens_per_s)}, but its request rate x mean output "
                f"length is {_g(requests_per_s)} x {_g(output_tokens)} = {_g(implied)} "
                f"({output_tokens_per_s / implied:.2f}x)"
            )
    if requests_per_s and completed and duration_s:
        implied = completed / duration_s
        if implied > 0 and _differs(requests_per_s, implied):
            found.append(
                f"requests/s: the file states {_g(requests_per_s)}, but its completed requests over the duration "
                f"are {_g(completed)} / {_g(duration_s)} s = {_g(implied)} ({requests_per_s / implied:.2f}x)"
            )
    return found
