"""How close the built-in approximate tokenizer comes to real BPE tokenizers.

Run: ``.venv/bin/python benchmarks/tokenizer_accuracy.py``

Needs ``mistral-common`` (``.venv/bin/pip install mistral-common``), for this script only: the
calculator itself does not depend on it. The package ships Mistral's Tekken BPE vocabularies
(tiktoken-style, 131k tokens) inside the wheel, so the comparison runs offline. (It pins
``numpy<2.4``; pip may downgrade numpy when installing it, and the script works with either.)

Corpus: text that is on every machine that has this repository: the repository's Markdown, YAML and
Python files, the shared design notes, and a fixed list of Python standard-library modules (code with
English docstrings and comments). It is English and code only: for other languages the rule is
less tested (CJK is counted as about one token per character, like real 100k+ vocabularies).
Each file is cut into chunks of 200 lines; the script prints the token-count ratio
(approximate / real) over the whole corpus, per kind of file, and its spread over the chunks.

Last run (tekken_240911; 219 chunks, 356,806 real tokens, 346,644 approximate):
  all 0.972 | markdown 0.970 | prose (licences) 1.073 | python 0.968 | python (stdlib) 1.006 | yaml 0.830
  per chunk: mean 0.973, stdev 0.087, 5%-95% 0.799-1.098, min 0.712, max 1.278
YAML is undercounted because Tekken splits numbers into single digits while the approximation, like
cl100k and Llama 3, groups up to three digits.
"""

from __future__ import annotations

import statistics
import sys
import sysconfig
from collections import defaultdict
from pathlib import Path
from typing import Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calculator.traffic.tokens import ApproxTokenizer

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
STDLIB_MODULES = [
    "argparse.py",
    "textwrap.py",
    "json/decoder.py",
    "json/encoder.py",
    "dataclasses.py",
    "functools.py",
    "pathlib.py",
    "logging/__init__.py",
    "email/message.py",
    "http/client.py",
    "statistics.py",
    "fractions.py",
    "decimal.py",
    "difflib.py",
    "csv.py",
    "zipfile.py",
]
CHUNK_LINES = 200


def corpus() -> list[tuple[str, str]]:
    """(kind, text) chunks."""
    files: list[Path] = []
    for pattern in ("*.md", "price_sheets/*.yaml", "gpu_specs/*.yaml", "models/*.yaml", "calculator/*.py"):
        files.extend(sorted(ROOT.glob(pattern)))
    files.extend(sorted(SHARED.glob("*.md")))
    licenses = Path("/usr/share/common-licenses")  # English legal prose, on Debian-family systems
    files.extend(licenses / n for n in ("Apache-2.0", "GPL-3", "GFDL-1.3", "MPL-2.0") if (licenses / n).is_file())
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files.extend(stdlib / m for m in STDLIB_MODULES if (stdlib / m).is_file())
    chunks = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        kind = {".md": "markdown", ".yaml": "yaml", ".py": "python"}.get(path.suffix, "prose (licences)")
        if path.is_relative_to(stdlib):
            kind = "python (stdlib)"
        for i in range(0, len(lines), CHUNK_LINES):
            text = "".join(lines[i : i + CHUNK_LINES])
            if text.strip():
                chunks.append((kind, text))
    return chunks


class Encoder(Protocol):
    """What this script uses of a real tokenizer (mistral-common's ``Tekkenizer``)."""

    def encode(self, s: str, bos: bool, eos: bool) -> list[int]: ...


def real_tokenizers() -> dict[str, Encoder]:
    try:
        import mistral_common
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    except ImportError:
        sys.exit("this benchmark needs mistral-common: .venv/bin/pip install mistral-common")
    data = Path(mistral_common.__file__).parent / "data"
    found: dict[str, Encoder] = {}
    for name in ("tekken_240911.json",):
        if (data / name).is_file():
            found[name.removesuffix(".json")] = Tekkenizer.from_file(data / name)
    return found


def main() -> None:
    approx = ApproxTokenizer()
    chunks = corpus()
    for name, real in real_tokenizers().items():
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        ratios = []
        for kind, text in chunks:
            a = approx.count(text)
            r = len(real.encode(text, bos=False, eos=False))
            totals[kind][0] += a
            totals[kind][1] += r
            totals["all"][0] += a
            totals["all"][1] += r
            ratios.append(a / r)
        q = statistics.quantiles(ratios, n=20)
        print(f"{name}: {len(chunks)} chunks, {totals['all'][1]:,} real tokens, {totals['all'][0]:,} approximate")
        for kind, (a, r) in sorted(totals.items()):
            print(f"  {kind:<16} ratio approximate/real {a / r:.3f}  ({r:,} real tokens)")
        print(
            f"  per chunk: mean {statistics.fmean(ratios):.3f}, stdev {statistics.stdev(ratios):.3f}, "
            f"5%-95% {q[0]:.3f}-{q[-1]:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}"
        )


if __name__ == "__main__":
    main()
