"""Speaker attributes and their groups, and how a group is put into words.

The study's attributes are gender (male, female), age (young, elderly) and accent (US, UK,
India, Australia, African); all are configurable. An attribute may cross others: ``age_gender``
has groups such as ``young_male``, each part taken from its own attribute, which is how the
negative-feedback table crosses age with gender. ``neutral`` is the no-attribute rendering the
FaiRLLM-style similarities compare against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benevaudit.errors import ConfigError

NEUTRAL = "neutral"

STUDY_GROUPS: dict[str, tuple[str, ...]] = {
    "gender": ("male", "female"),
    "age": ("young", "elderly"),
    "accent": ("US", "UK", "India", "Australia", "African"),
}

# How each group reads in a sentence: age and accent are adjectives, gender picks the noun.
ADJECTIVES: dict[str, str] = {
    "young": "young", "elderly": "elderly",
    "US": "American", "UK": "British", "India": "Indian", "Australia": "Australian",
    "African": "African",
}
NOUNS: dict[str, str] = {"male": "man", "female": "woman"}


def group_parts(group: str) -> list[str]:
    """``young_male`` -> ``["young", "male"]``; a plain group is one part."""
    return group.split("_")


def describe(group: str) -> str:
    """The speaker as a noun phrase: ``young_male`` -> ``a young man``, ``UK`` -> ``a British
    person``.

    Unknown parts are an error naming the valid ones, so a typo in a config fails before any
    model call instead of producing prompts that say nothing.
    """
    adjectives, noun = [], "person"
    for part in group_parts(group):
        if part in NOUNS:
            noun = NOUNS[part]
        elif part in ADJECTIVES:
            adjectives.append(ADJECTIVES[part])
        else:
            raise ConfigError(f"group {group!r}: unknown part {part!r}; valid parts: "
                              f"{sorted(ADJECTIVES) + sorted(NOUNS)} (join parts with '_')")
    phrase = " ".join([*adjectives, noun])
    article = "an" if phrase[0].lower() in "aeiou" else "a"
    return f"{article} {phrase}"


def check_attributes(attributes: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Validate ``{attribute: [groups]}``: at least two groups each, every group describable.

    A combined attribute (``age_gender``) must give each group one part per component, in the
    component order, e.g. ``young_male``.
    """
    if not attributes:
        raise ConfigError("probe.attributes is empty; give at least one attribute with groups, "
                          f"e.g. {dict(STUDY_GROUPS)}")
    out: dict[str, list[str]] = {}
    for attribute, groups in attributes.items():
        groups = [str(g) for g in groups]
        if len(groups) < 2 or len(set(groups)) != len(groups):
            raise ConfigError(f"probe.attributes.{attribute}: needs two or more distinct groups, "
                              f"got {groups}")
        if NEUTRAL in groups:
            raise ConfigError(f"probe.attributes.{attribute}: {NEUTRAL!r} is added by "
                              "probe.neutral, not listed as a group")
        components = attribute.split("_")
        for group in groups:
            describe(group)
            parts = group_parts(group)
            if len(components) > 1 and len(parts) != len(components):
                raise ConfigError(f"probe.attributes.{attribute}: group {group!r} needs one part "
                                  f"per component {components}, joined by '_'")
        out[str(attribute)] = groups
    return out
