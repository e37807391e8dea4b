"""Who can reach the app, and where the Replay page may make this server send requests.

Streamlit listens on every interface unless ``server.address`` names one; ``make run``, the README's
command and ``.streamlit/config.toml`` all say 127.0.0.1, so only this machine reaches the app. Whoever
reaches it can make the server send requests from the Replay page (to an internal address too), so once
the app listens anywhere else, or :data:`ALLOW_ENV` is set (an app behind a proxy listens on 127.0.0.1 and
is still exposed), Replay sends only to the origins listed there; an empty list means to none.

Pure Python (no streamlit): the page passes in the address it listens on and the variable's value.
"""

from __future__ import annotations

import contextlib
import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from calculator.measure.bench import url_problem

ALLOW_ENV = "CALCULATOR_REPLAY_TARGETS"
"""Comma-separated origins (``scheme://host:port``) the Replay page may send to when the app is exposed."""
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Origin:
    """Where a request goes: what the allow list compares (a path or credentials change nothing)."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def origin(url: str) -> Origin:
    """The origin a URL sends to; ``ValueError`` with a sentence for one that is not an http(s) URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # reading it checks it: 0 to 65535
    except ValueError as exc:  # an unclosed [IPv6] bracket, a port out of range or not a number
        raise ValueError(f"{url.strip()!r} is not a usable URL ({url_problem(exc)})") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{url.strip()!r} is not an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    host = parts.hostname.rstrip(".")
    with contextlib.suppress(ValueError):  # one spelling of an address (::1, not 0:0::1); a name stays
        host = str(ipaddress.ip_address(host))
    return Origin(parts.scheme, host, port or DEFAULT_PORTS[parts.scheme])


def is_local(address: str | None) -> bool:
    """Whether an app listening on ``address`` is reached from this machine only. None or empty: Streamlit
    listens on every interface; a host name other than localhost may resolve to any interface."""
    if not address:
        return False
    host = address.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ReplayTargets:
    """Where the Replay page may send requests: anywhere (``allowed`` None), or only to ``allowed``."""

    allowed: tuple[Origin, ...] | None
    why: str = ""
    """Why the list applies (the sentence the page shows), empty when it does not."""
    problems: tuple[str, ...] = ()
    """Entries of the variable that are not origins (left out of the list)."""

    def problem(self, base_url: str) -> str | None:
        """Why Replay must not send to ``base_url`` (one sentence), or None when it may."""
        try:
            target = origin(base_url)
        except ValueError as exc:
            return str(exc)
        if self.allowed is None or target in self.allowed:
            return None
        listed = ", ".join(f"`{o}`" for o in self.allowed) or "none"
        return f"`{target}` is not an allowed target: {self.why} (allowed: {listed})"


def replay_targets(address: str | None, allow: str | None) -> ReplayTargets:
    """The Replay page's targets for an app listening on ``address``, with :data:`ALLOW_ENV` set to ``allow``
    (None: not set)."""
    if allow is None and is_local(address):
        return ReplayTargets(None)
    listening = f"listens on {address}" if address else "listens on every interface"
    why = (
        f"this app {listening}, so other machines may reach it, and it sends only to the origins in `{ALLOW_ENV}`"
        if allow is None or not is_local(address)
        else f"`{ALLOW_ENV}` is set, and the app sends only to the origins it lists"
    )
    found: list[Origin] = []
    problems: list[str] = []
    for entry in (allow or "").split(","):
        if not entry.strip():
            continue
        try:
            found.append(origin(entry))
        except ValueError as exc:
            problems.append(f"{ALLOW_ENV}: {exc}; give origins like https://llm.internal:8000, comma-separated")
    return ReplayTargets(tuple(found), why, tuple(problems))
