"""Which linears a measured run's LoRA adapted, read from its source's free-text notes (one reading
for the memory and the throughput rows)."""

from __future__ import annotations

import re

from gpuprice.models.choices import LoraTargets

# PEFT's "all-linear", trainers' "all" switches, Qwen-1's finetune.py list (c_attn, c_proj, w1, w2)
_ALL = re.compile(r"all[ _-]?linear|target[s]? all|lora_target all|all layers|c_attn,\s*c_proj,\s*w1,\s*w2")
# the four attention projections, spelled as PEFT module names or as a list / an "attention" target
_QKVO = re.compile(
    r"q_proj,\s*k_proj,\s*v_proj,\s*o_proj|\bq,\s*k,\s*v,\s*o\b(?!,\s*gate)|target attention|attention[- ]only|\bqkvo\b"
)
_QV = re.compile(r"\bq_proj,\s*v_proj\b|\bq,\s*v\b|\bqv\b")


def stated_lora_targets(notes: str) -> LoraTargets | None:
    """``all``, ``qkvo`` or ``qv`` when the notes say which linears carry adapters, else None."""
    text = notes.lower()
    if _ALL.search(text):
        return "all"
    if _QKVO.search(text):
        return "qkvo"
    if _QV.search(text):
        return "qv"
    return None
