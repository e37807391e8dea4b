"""How the app says a core warning: the core's sentence, plus what to do about it on these pages.

The core names no flag and no sidebar label; each front end adds its own advice by the warning's
stable code, so no page rewrites a core sentence.
"""

from __future__ import annotations

from calculator.errors import Problem

ADVICE: dict[str, str] = {
    "tokenizer_factors": (
        "set the token factors in the sidebar under **Advanced**, *Token counts* (one for the serverless model, "
        "one for the GPU options' model), to count it"
    ),
    "best_case_hit_rate": "measure yours on the **Prefix analysis** page, or lower the cache hit rate",
}
"""What a user of the app can do about a warning, by its code."""


def warning(problem: Problem) -> str:
    """A warning's sentence with the app's advice, where it has some."""
    advice = ADVICE.get(problem.code or "")
    text = problem.text()
    return f"{text.rstrip('.')}; {advice}." if advice else text
