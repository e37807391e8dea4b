"""The bundled presets with their GPU options named by hand, as they were before they followed the deployment
search (``offer: cheapest``): for tests of what a named offer and a named record do (sizing from a run's
saturation point, a lower bound, an estimate's range), which the search's own picks would hide."""

from __future__ import annotations

from calculator.scenario.model import DedicatedChoice, GpuVmChoice, Scenario, load_preset

NAMED: dict[str, tuple[tuple[str, str], tuple[str, str], str | None]] = {
    # preset: (dedicated provider and offer, GPU VM provider and offer, the record it sized from)
    "coding-agent": (("fireworks", "on-demand-h200-141gb"), ("nebius", "b200-8x"), None),
    "rag-chatbot": (("together", "h200-141gb"), ("nebius", "h200-sxm-1x"), "sglang-llama-3.3-70b-bf16-4xh200-rate4"),
    "multi-turn-chat": (
        ("fireworks", "on-demand-h200-141gb"),
        ("runpod", "h200-secure"),
        "sglang-llama-3.3-70b-bf16-4xh200-rate4",
    ),
    "batch-summarisation": (
        ("huggingface", "aws-nvidia-h200-x8"),
        ("runpod", "h200-community"),
        "sglang-llama-3.3-70b-bf16-4xh200-rate8",
    ),
}


def named_preset(name: str) -> Scenario:
    """The preset with its former named offers and sizing record."""
    (dp, do), (vp, vo), record = NAMED[name]
    preset = load_preset(name)
    hosting = preset.self_hosting
    if record is not None:
        hosting = hosting.model_copy(update={"record": record, "model": None})
    return preset.model_copy(
        update={
            "dedicated": DedicatedChoice(provider=dp, offer=do),
            "gpu_vm": GpuVmChoice(provider=vp, offer=vo),
            "self_hosting": hosting,
        }
    )


def named_params(name: str) -> dict[str, str]:
    """The same as the Compare page's link parameters."""
    (dp, do), (vp, vo), record = NAMED[name]
    params = {"preset": name, "ded": f"{dp}/{do}", "vm": f"{vp}/{vo}"}
    if record is not None:
        params["rec"] = record
    return params
