"""Peak memory of reading a 1 GB prompt log (issue 14 part 5): bounded whatever the size of the input.

Writes a log of about ``--gb`` GB (default 1) of OpenAI chat requests in a temporary folder: agent-style
sessions whose conversations grow turn by turn over a shared system prompt, as real logs do, plain JSON
Lines and its zstd copy. Then, each in a fresh process so that each peak is its own:

- read: every request of the log read and tokenized into block hashes, nothing kept (the input side);
- read zstd: the same from the compressed copy;
- prefix: the whole ``python -m calculator prefix LOG --capacity-tokens ...`` command, cache simulation
  and hit-rate curve included (its state grows with the distinct blocks of the log, not with its bytes).

Prints each run's peak RSS beside the log's size: the input side must stay far below it, and under 1 GB.
Run: ``python benchmarks/log_inputs.py`` (about 10 minutes for 1 GB on a laptop core).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "the",
    "invoice",
    "total",
    "for",
    "account",
    "region",
    "quarterly",
    "report",
    "customer",
    "refund",
    "policy",
    "shipping",
    "delay",
    "error",
    "stack",
    "trace",
    "function",
    "returns",
    "value",
    "config",
    "deploy",
    "cluster",
    "node",
    "memory",
    "latency",
    "request",
    "response",
    "token",
]


def write_log(path: Path, target_bytes: int, seed: int = 7) -> int:
    """About ``target_bytes`` of chat requests; returns the number of requests written."""
    rng = random.Random(seed)
    system = {"role": "system", "content": "You are the support agent of Example Corp. " + " ".join(WORDS) * 20}
    written = requests = 0
    session = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target_bytes:
            session += 1
            history: list[dict[str, str]] = [system]
            for turn in range(rng.randint(3, 12)):
                question = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 200)))
                history.append({"role": "user", "content": f"session {session} turn {turn}: {question}"})
                line = json.dumps({"model": "m", "messages": history, "timestamp": 1_700_000_000 + requests}) + "\n"
                out.write(line)
                written += len(line)
                requests += 1
                answer = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
                history.append({"role": "assistant", "content": answer})
    return requests


READ_ONLY = """
import resource, sys, time
from calculator.traffic.prefix import LogReader
started = time.process_time()
n = tokens = 0
for request in LogReader(sys.argv[1]):
    n += 1
    tokens += request.input_tokens
print(n, tokens, time.process_time() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (kB) of a command, measured by a wrapper of its own: a process's
    RUSAGE_CHILDREN peak only grows, so each run gets a fresh parent."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], cwd=ROOT, capture_output=True, text=True, check=True)
    return time.monotonic() - started, int(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0, help="log size in GB (default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="log-inputs-") as folder:
        log = Path(folder) / "log.jsonl"
        started = time.monotonic()
        n = write_log(log, int(args.gb * 1e9))
        size = log.stat().st_size
        print(f"log: {size / 1e9:.2f} GB, {n:,} requests (written in {time.monotonic() - started:.0f} s)")
        import zstandard

        packed = log.with_suffix(".jsonl.zst")
        with log.open("rb") as src, packed.open("wb") as dst:
            zstandard.ZstdCompressor(level=3).copy_stream(src, dst)
        print(f"zstd copy: {packed.stat().st_size / 1e6:.0f} MB")
        rows = []
        for label, argv in (
            ("read", [sys.executable, "-c", READ_ONLY, str(log)]),
            ("read zstd", [sys.executable, "-c", READ_ONLY, str(packed)]),
            ("prefix", [sys.executable, "-m", "calculator", "prefix", str(log), "--capacity-tokens", "1000000"]),
        ):
            seconds, kb = peak(argv)
            rows.append((label, kb))
            share = kb * 1024 / size
            print(f"{label:10} {seconds:7.1f} s   peak RSS {kb / 1024:7.0f} MB ({share:.3f} of the log's size)")
        worst = max(kb for label, kb in rows if label.startswith("read")) / 1024
        verdict = "OK" if worst < 1024 else "OVER"
        print(f"input side: peak RSS {worst:.0f} MB for a {size / 1e9:.2f} GB log (limit 1,024 MB): {verdict}")


_PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

if __name__ == "__main__":
    main()
