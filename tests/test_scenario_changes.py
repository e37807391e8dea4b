"""A preset's name and description stand only while its inputs are unchanged (issue 25, part 2): the rule in
``calculator/scenario/changes.py``, read against the bundled coding-agent preset (20,000 input tokens, 0.9
prefix share, 500 output tokens, 1,000,000 turns a month, 200 users: ``calculator/data/scenarios``)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from calculator.scenario.changes import changes, followed, slug, started_from
from calculator.scenario.model import Scenario, in_currency, load_preset


@pytest.fixture(scope="module")
def preset() -> Scenario:
    return load_preset("coding-agent")


def _with(s: Scenario, part: str, **update: object) -> Scenario:
    return s.model_copy(update={part: getattr(s, part).model_copy(update=update)})


def test_the_preset_itself_and_its_presentation_are_no_change(preset: Scenario) -> None:
    assert changes(preset, preset) == []
    shown_in_euros = in_currency(preset, "EUR").model_copy(update={"as_of": None})  # engineer cost converted
    assert changes(preset, shown_in_euros) == []
    kept = followed(preset, shown_in_euros)
    assert kept.name == "Coding agent (the seed's turn)" and "200 developers" in (kept.description or "")


def test_each_change_is_named_with_the_presets_value_beside_it(preset: Scenario) -> None:
    changed = _with(_with(preset, "workload", input_tokens=3000, prefix_share=Decimal("0.5")), "traffic", users=None)
    said = changes(preset, changed)
    assert said == [
        "input tokens a turn 3,000 (was 20,000)",
        "prefix share 0.5 (was 0.9)",
        "users not counted (was 200)",
    ]
    other_api = changed.model_copy(update={"serverless": preset.serverless.model_copy(update={"provider": "zai"})})  # type: ignore[union-attr]
    assert changes(preset, other_api)[0] == "serverless API zai GLM-5.3 (was lyceum GLM-5.3)"


def test_a_changed_preset_says_it_was_started_from_it_and_what_changed(preset: Scenario) -> None:
    changed = followed(preset, _with(preset, "traffic", turns_per_month=1_520_833))
    assert changed.name == started_from(preset) == "Started from Coding agent (the seed's turn)"
    assert changed.description is not None and "200 developers" not in changed.description
    assert "turns a month 1,520,833 (was 1,000,000)" in changed.description
    # back to the preset's value: the preset's words again
    again = followed(preset, _with(changed, "traffic", turns_per_month=1_000_000))
    assert again.name == preset.name and again.description == preset.description


def test_the_users_own_name_and_description_stand_whatever_changed(preset: Scenario) -> None:
    changed = _with(preset, "workload", output_tokens=400)
    named = followed(preset, changed, name="Acme support bot", description=preset.description)
    assert named.name == "Acme support bot"
    assert named.description is not None and "output tokens a turn 400 (was 500)" in named.description
    both = followed(preset, changed, name="Acme support bot", description="Priced with Acme, EU only.")
    assert (both.name, both.description) == ("Acme support bot", "Priced with Acme, EU only.")
    # the preset's own name typed back is not a name of the user's; an emptied description is none
    assert followed(preset, changed, name=preset.name).name == started_from(preset)
    assert followed(preset, preset, description="").description is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Coding agent (the seed's turn)", "coding-agent-the-seeds-turn"),
        ("Started from Coding agent (the seed's turn)", "started-from-coding-agent-the-seeds-turn"),
        ("Acme Corp: support bot / EU", "acme-corp-support-bot-eu"),
        ("Café Zürich", "cafe-zurich"),
        ("日本語", "scenario"),
        ("x" * 200, "x" * 80),
    ],
)
def test_a_name_becomes_a_file_name(name: str, expected: str) -> None:
    assert slug(name) == expected
