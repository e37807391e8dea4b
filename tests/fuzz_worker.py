"""A child process that runs hostile cases one after another under an address-space limit, for the fuzz.

Run as ``python tests/fuzz_worker.py LIMIT_MB``: it limits its own address space (RLIMIT_AS) to LIMIT_MB,
so a memory bomb that got past a reader ends in MemoryError here, never in the test process or the
machine. Each line on stdin is a case as JSON; each answer is one JSON line on stdout:

- ``{"kind": "cli", "argv": [...], "cwd": DIR}``: ``calculator.cli.main(argv)``;
- ``{"kind": "page", "page": NAME, "key": KEY, "params": {...}, "file": PATH, "name": NAME, "many": BOOL,
  "submit": KEY | null}``: the page through AppTest with that file uploaded under that name.

An answer holds the exit code (or the page's exceptions and errors), stdout, stderr, seconds, and the
peak resident memory during the case (the worker's own included). The download deadline and the cluster
timeout are shortened so that a trickle or a silent server costs seconds (the same code, a smaller number).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cli(case: dict[str, Any]) -> dict[str, Any]:
    from calculator.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    code: int | None = None
    failure = None
    try:
        os.chdir(case.get("cwd") or here)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(case["argv"])
    except MemoryError:
        failure = "MemoryError: needed more than the worker's address space"
    except BaseException:
        failure = traceback.format_exc()
    finally:
        os.chdir(here)
    return {"code": code, "out": out.getvalue(), "err": err.getvalue(), "failure": failure}


def _page(case: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.apptest import open_page

    failure = None
    exceptions: list[str] = []
    errors: list[str] = []
    try:
        at = open_page(case["page"], 120, **case.get("params", {}))
        upload = (case["name"], Path(case["file"]).read_bytes(), "application/octet-stream")
        at.file_uploader(key=case["key"]).set_value([upload] if case.get("many") else upload)
        if case.get("submit"):
            at.button(key=case["submit"]).click()
        at.run()
        exceptions = [str(e.value) for e in at.exception]
        errors = [str(e.value) for e in [*at.error, *at.warning]]
    except MemoryError:
        failure = "MemoryError: needed more than the worker's address space"
    except BaseException:
        failure = traceback.format_exc()
    return {"exceptions": exceptions, "errors": errors, "failure": failure}


def _reset_peak() -> None:
    """Start counting the peak resident memory afresh (Linux: 5 to clear_refs resets VmHWM), so each case's
    peak is its own and not that of the cases before it in this process."""
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def _peak_mb() -> float:
    """The peak resident memory since :func:`_reset_peak`, in MB (the process's lifetime peak elsewhere)."""
    with contextlib.suppress(OSError), open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    limit = int(sys.argv[1]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import calculator.catalog.download as download
    import calculator.traffic.shards as shards

    download.DOWNLOAD_DEADLINE_S = 3.0
    shards.CONNECT_TIMEOUT_S = 2
    answers = os.fdopen(os.dup(1), "w")  # the answers' own channel: whatever else writes to fd 1 (a library,
    os.dup2(2, 1)  # a forked worker) goes to stderr instead of into an answer
    sys.stdout = sys.stderr
    for line in sys.stdin:
        case = json.loads(line)
        _reset_peak()
        start = time.perf_counter()
        result = _cli(case) if case["kind"] == "cli" else _page(case)
        result["seconds"] = time.perf_counter() - start
        result["peak_mb"] = _peak_mb()
        print(json.dumps(result), file=answers, flush=True)


if __name__ == "__main__":
    main()
