"""A run's prefix share from its own settings: the share of input tokens its prompts repeat from earlier ones.

Benchmark clients build their prompts from a dataset whose settings fix how much the prompts share, and a
result file often names them (SGLang writes ``dataset_name``; vLLM results carry ``--metadata`` pairs at the top
level). The share is what an unlimited prefix cache would serve, the first prompt of each shared prefix missing:

``random``                   random tokens share nothing, but vLLM's ``random_prefix_len`` puts one prefix before
                             every prompt: ``P / (P + I)``.
``generated-shared-prefix``  SGLang's groups of prompts with one system prompt each: ``(1 - 1/per_group) S / (S + Q)``
                             (``gsp_*`` settings; SGLang's defaults 64 groups of 16, 2,048-token system prompt,
                             128-token question for the ones the file does not state).
``prefix_repetition``        vLLM's prompts drawn from ``num_prefixes`` prefixes: ``(1 - prefixes/N) Lp / (Lp + Ls)``
                             (defaults 10 prefixes, 256-token prefix and suffix).

Any other dataset (ShareGPT, a trace) does not say, and the share stays unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.reading import Bad, Fields, fmt_number, read_number

GSP_DEFAULTS = {
    "gsp_num_groups": 64,
    "gsp_prompts_per_group": 16,
    "gsp_system_prompt_len": 2048,
    "gsp_question_len": 128,
}
"""SGLang ``bench_serving``'s defaults for ``--dataset-name generated-shared-prefix``."""
REPETITION_DEFAULTS = {
    "prefix_repetition_prefix_len": 256,
    "prefix_repetition_suffix_len": 256,
    "prefix_repetition_num_prefixes": 10,
}
"""vLLM ``bench serve``'s defaults for ``--dataset-name prefix_repetition``."""

_GSP_NAMES = frozenset({"generated-shared-prefix", "generated_shared_prefix", "gsp"})
_REPETITION_NAMES = frozenset({"prefix_repetition", "prefix-repetition"})


def _setting(settings: Mapping[str, Any], key: str, default: float | None, defaulted: list[str]) -> float | None:
    try:
        value = read_number(settings.get(key))
    except Bad:
        value = None
    if value is None or value < 0:
        if default is not None:
            defaulted.append(f"{key} {fmt_number(default)}")
        return default
    return value


def dataset_of(settings: Mapping[str, Any]) -> str | None:
    for key in ("dataset_name", "dataset"):
        value = settings.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def read_prefix_share(settings: Mapping[str, Any], requests: float | None, fields: Fields) -> None:
    """Set ``fields.prefix_share`` from the run's dataset settings where they fix it, and say how in its notes."""
    dataset = dataset_of(settings)
    if dataset is None:
        return
    name = dataset.lower()
    defaulted: list[str] = []
    share: float | None = None
    if name == "random":
        prefix = _setting(settings, "random_prefix_len", 0, [])
        if not prefix:
            share = 0.0
            fields.notes.append("prefix share 0: the random dataset's prompts are random tokens that share nothing")
        else:
            length = _setting(settings, "random_input_len", None, defaulted)
            if length is not None:
                share = prefix / (prefix + length)
                fields.notes.append(
                    f"prefix share {share:.1%}: every prompt opens with the same {fmt_number(prefix)}-token "
                    f"random_prefix_len before {fmt_number(length)} random tokens"
                )
    elif name in _GSP_NAMES:
        values = {k: _setting(settings, k, v, defaulted) for k, v in GSP_DEFAULTS.items()}
        system, question, per_group = (
            values["gsp_system_prompt_len"],
            values["gsp_question_len"],
            values["gsp_prompts_per_group"],
        )
        if system is not None and question is not None and per_group and system + question > 0:
            share = (1 - 1 / per_group) * system / (system + question)
            fields.notes.append(
                f"prefix share {share:.1%} from the generated-shared-prefix dataset: groups of "
                f"{fmt_number(per_group)} prompts share a {fmt_number(system)}-token system prompt before a "
                f"{fmt_number(question)}-token question"
            )
    elif name in _REPETITION_NAMES:
        values = {k: _setting(settings, k, v, defaulted) for k, v in REPETITION_DEFAULTS.items()}
        prefix, suffix, prefixes = (
            values["prefix_repetition_prefix_len"],
            values["prefix_repetition_suffix_len"],
            values["prefix_repetition_num_prefixes"],
        )
        count = requests or _setting(settings, "num_prompts", None, [])
        if prefix is not None and suffix is not None and prefixes is not None and count and prefix + suffix > 0:
            share = max(1 - prefixes / count, 0.0) * prefix / (prefix + suffix)
            fields.notes.append(
                f"prefix share {share:.1%} from the prefix_repetition dataset: {fmt_number(count)} prompts drawn "
                f"from {fmt_number(prefixes)} prefixes of {fmt_number(prefix)} tokens, each before a "
                f"{fmt_number(suffix)}-token suffix"
            )
    else:
        fields.notes.append(f"dataset {dataset} does not say how much its prompts share: prefix share unknown")
        return
    if share is None:
        fields.notes.append(f"dataset {dataset}: its settings do not fix the prefix share, which stays unknown")
        return
    if defaulted:
        fields.notes.append(f"settings the file does not state taken at the tool's defaults: {', '.join(defaulted)}")
    fields.prefix_share = round(min(max(share, 0.0), 1.0), 4)
