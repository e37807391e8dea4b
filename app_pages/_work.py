"""An upload's work on a page, in a child process (:mod:`calculator.present.work`): the page shows its progress,
how long it has taken against the limit, and a Cancel button; the server's own process only waits, so other
sessions keep answering, and a hostile upload can exhaust only the child's time and memory.

A click on Cancel reruns the page, which stops the waiting (Streamlit ends the old run at its next element
update, a few times a second here) and with it the child. The rerun then finds the click and answers
:class:`~calculator.present.work.WorkStopped` (``cancelled``) for that work, until :func:`forget_cancel`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import streamlit as st

from calculator.present.work import Work, WorkStopped

__all__ = ["CANCEL", "cancelled", "forget_cancel", "in_child"]

CANCEL = "Cancel"
"""The Cancel button's label."""
_POLL = 0.25
"""Seconds between two updates of the page while the work runs."""


def _keys(key: str) -> tuple[str, str]:
    return f"{key}_cancel", f"{key}_cancelled"


def cancelled(key: str, token: Hashable) -> bool:
    """Whether the work ``token`` under ``key`` was cancelled (the click is seen on the run after it)."""
    ss = st.session_state
    button, done = _keys(key)
    if ss.get(button):
        ss[done] = token
    return bool(ss.get(done) == token)


def forget_cancel(key: str) -> None:
    """Let the cancelled work under ``key`` run again."""
    st.session_state.pop(_keys(key)[1], None)


def in_child(
    what: str,
    key: str,
    token: Hashable,
    fn: Callable[..., Any],
    *args: Any,
    show: Callable[[float, str], None] | None = None,
    **kwargs: Any,
) -> Any:
    """``fn(*args, **kwargs)`` in a child process within the time and memory limits, with a Cancel button
    (keyed ``{key}_cancel``) and the time taken on the page; ``show`` is given the work's progress (give
    ``progress=True`` for work that reports it). Its value, the error it raised, or :class:`WorkStopped`."""
    if cancelled(key, token):
        raise WorkStopped(what, "cancelled")
    place = st.empty()
    with place.container():
        clock = st.caption(f"{what}: starting")
        st.button(CANCEL, key=_keys(key)[0], help="Stop this work; the page keeps its other inputs")
    work = Work(what, fn, *args, **kwargs)
    try:
        while not work.done:
            said = work.poll(_POLL)
            if said and show is not None:
                show(*said[-1])
            clock.caption(f"{what}: {work.elapsed:,.0f} s (at most {work.seconds:,.0f} s)")
        return work.result()
    finally:
        work.stop()
        place.empty()
