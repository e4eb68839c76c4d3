"""Role-only chat templates that lay out a guard's prompt the way its own checkpoint expects.

The guards' shipped templates *build* the guard instruction from raw chat turns; benevaudit
writes that instruction itself (each guard's module under ``detectors/guards/``), so on the guard's own checkpoint the
messages must only be framed with the model's role markers. These templates do that, and
nothing else. They are installed only when the detector runs its own checkpoint
(``llm.model`` equals ``checkpoint``); any other model keeps its own template.
"""

from __future__ import annotations

from benevaudit.errors import ConfigError

TEMPLATES: dict[str, str] = {
    # Llama Guard 3's own template, its instruction left to the message: it opens with a space
    # before the BOS token and ends at the assistant header (no blank line; the model writes it).
    "llama3": (
        "{{ ' ' + bos_token }}{% for m in messages %}"
        "<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>"
        "{% endfor %}{% if add_generation_prompt %}"
        "<|start_header_id|>assistant<|end_header_id|>{% endif %}"),
    # Granite Guardian 3.3: the final user turn is the judge protocol; the reply is the judge's,
    # in non-thinking mode.
    "granite_guardian": (
        "{% for m in messages %}{% if loop.last and m['role'] == 'user' %}"
        "<|start_of_role|>judge_protocol<|end_of_role|>{{ m['content'] }}<|end_of_text|>\n"
        "{% else %}<|start_of_role|>{{ m['role'] }}<|end_of_role|>{{ m['content'] }}"
        "<|end_of_text|>\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|start_of_role|>judge{no_think}<|end_of_role|>"
        "{% endif %}"),
    # WildGuard ships no chat template; its card gives the whole string.
    "wildguard": (
        "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}"
        "<|user|>\n[INST] {{ m['content'] }} [/INST]\n{% else %}"
        "<|assistant|>\n{{ m['content'] }}\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"),
    # ChatML (Qwen3Guard), with the empty thinking block Qwen3 writes in non-thinking mode.
    "qwen3guard": (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n{% endif %}"),
}


def template_for(name: str | None) -> str | None:
    """The named template, None for None; an unknown name lists the valid ones."""
    if name is None:
        return None
    if name not in TEMPLATES:
        raise ConfigError(f"unknown guard template {name!r}; valid: {sorted(TEMPLATES)}")
    return TEMPLATES[name]
