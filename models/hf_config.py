"""Read a Hugging Face ``config.json`` into a :class:`ModelArch`.

Configs name the same quantity differently across model families (``n_embd`` / ``hidden_size`` /
``d_model``, ``n_layer`` / ``num_hidden_layers``, ``multi_query`` / ``num_kv_heads`` /
``num_key_value_heads`` ...). Each quantity is looked up through its known spellings; per-family
defaults fill what a config leaves implicit (e.g. Falcon ties its LM head, GPT-NeoX does not).
An unknown ``model_type`` with the usual fields is read like a Llama-style decoder.

Over ~400 lines: one reader per config layout (MoE, latent attention, hybrid mixers, Nemotron-NAS'
per-block configs, nested multimodal text configs), each a few dozen lines, all turning a config
into the one ``ModelArch``; the spelling tables are in :mod:`gpuprice.models.hf_families`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuprice.bounded_load import load_json
from gpuprice.errors import BadInput, read_text_input
from gpuprice.models.architectures import ModelArch
from gpuprice.models.hf_families import (
    ACTIVATION_KEYS,
    BIASED_TYPES,
    FALCON,
    FAMILY_ALIASES,
    FAMILY_DEFAULTS,
    GATED_TYPES,
    GELU_NEW_BY_DEFAULT,
    HEADS,
    HIDDEN,
    INTERMEDIATE,
    LAYERNORM_TYPES,
    LAYERS,
    NESTED_TEXT_DEFAULTS,
    PARALLEL_BLOCK_TYPES,
    QKV_BIAS_TYPES,
    SSM_LAYOUTS,
    TIED_BY_DEFAULT,
    UNGATED_ACTIVATIONS,
    UNGATED_TYPES,
    UNSUPPORTED_LAYOUTS,
    VOCAB,
)

# The largest integer any config field can hold: a vocabulary or a context of a billion is
# already beyond every published model; larger numbers only overflow the arithmetic.
MAX_CONFIG_INTEGER = 2**31 - 1


class _Config:
    """A config dict plus the file it came from, for error messages."""

    def __init__(self, data: Mapping[str, Any], path: Path) -> None:
        self.data = data
        self.path = path

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def first(self, keys: Sequence[str], what: str, default: Any = None, required: bool = False) -> Any:
        for key in keys:
            if self.data.get(key) is not None:
                return self.data[key]
        if required:
            raise BadInput(f"{self.path}: config has no {what} field ({' / '.join(keys)})")
        return default

    def int_(
        self, keys: Sequence[str], what: str, default: int | None = None, required: bool = False
    ) -> int | None:
        value = self.first(keys, what, default, required)
        if value is None:
            return None
        if isinstance(value, list) and value:
            # Hunyuan writes per-layer lists ("moe_topk": [8, 8, ...]): one value when all agree
            if any(v != value[0] or isinstance(v, bool) for v in value):
                raise BadInput(
                    f"{self.path}: {what} differs by layer ({value[:4]}...); per-layer values are not read"
                )
            value = value[0]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value != int(value)
            or value < 0
        ):
            raise BadInput(f"{self.path}: {what} must be a non-negative integer, got {value!r}")
        if value > MAX_CONFIG_INTEGER:  # 1e308 would overflow every float it meets downstream
            raise BadInput(f"{self.path}: {what} {value:g} is no model's; at most {MAX_CONFIG_INTEGER:,}")
        return int(value)

    def bool_(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        return default if value is None else bool(value)


# A JSON string, or a bare Infinity / -Infinity / NaN outside one.
_JSON_CONSTANT = re.compile(r'("(?:[^"\\]|\\.)*")|-?\b(?:Infinity|NaN)\b')


def _null_constants(text: str) -> str:
    """Python's json.dumps writes float("inf") as a bare ``Infinity``, and transformers saves
    configs with it: nvidia/Nemotron-H-56B-Base-8K and NVIDIA-Nemotron-3-Super-120B-A12B keep
    ``time_step_limit: [0.0, Infinity]`` (a Mamba clamp no count reads). Read such constants as
    null so the file loads; a field the count needs then reads as missing, and is named."""
    return _JSON_CONSTANT.sub(lambda m: m.group(1) or "null", text)


def load_config_json(path: Path) -> dict[str, Any]:
    """Parse a config file, turning every failure into a one-line BadInput."""
    text = read_text_input(path, "config")
    try:
        data = load_json(_null_constants(text))
    except ValueError as exc:
        raise BadInput(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _language_model_config(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The nested text model's config of a multimodal wrapper, or None when the top level is the
    language model itself (it names a width and a head count)."""
    if any(k in data for k in HIDDEN) and any(k in data for k in HEADS):
        return None
    thinker = data.get("thinker_config")
    for holder in (data, thinker if isinstance(thinker, dict) else {}):
        text = holder.get("text_config")
        if isinstance(text, dict) and (not any(k in data for k in HIDDEN) or any(k in text for k in HEADS)):
            return text
    return None


def config_path_in_table(table: Path, cell: str) -> Path:
    """A config.json a CSV cell names (a ``config`` column): as written when absolute (``~``
    expanded), else beside the table, so a table and its configs move together."""
    path = Path(cell.strip()).expanduser()
    return path if path.is_absolute() else table.parent / path


def arch_from_config_file(path: Path) -> ModelArch:
    """The architecture of a config.json, or of the model folder that holds one (the Hugging Face
    layout ``<model>/config.json``, as ``from_pretrained`` takes it)."""
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BadInput(
                f"config folder {path} has no config.json; give a config.json or a model folder holding one"
            )
        path = path / "config.json"
    return arch_from_config(load_config_json(path), path)


def arch_from_config(data: Mapping[str, Any], path: Path | str = "<config>") -> ModelArch:
    """Build the architecture of a Hugging Face config dict (``path`` names it in errors)."""
    path = Path(path)
    # Multimodal wrappers (Llava, Gemma 3, Mllama...) keep the language model under text_config
    # (Qwen2.5-Omni under thinker_config.text_config). Some saved copies also carry a top-level
    # hidden_size (the wrapper's) without a head count: the nested language model is read then.
    text = _language_model_config(data)
    if text is not None:
        nested = NESTED_TEXT_DEFAULTS.get(str(text.get("model_type")), {})
        # The wrapper's tie_word_embeddings ties the LM head when the text config is silent
        # (Qwen3-VL-8B-Instruct states it only at the top level).
        outer = {k: data[k] for k in ("model_type", "tie_word_embeddings") if data.get(k) is not None}
        data = {"model_type": None, **nested, **outer, **{k: v for k, v in text.items() if k != "model_type"}}
        data["model_type"] = text.get("model_type") or outer.get("model_type")
    model_type = str(data.get("model_type") or "unknown").lower()
    family = FAMILY_ALIASES.get(model_type, model_type)
    if family in UNSUPPORTED_LAYOUTS:
        raise BadInput(f"{path}: {model_type}: {UNSUPPORTED_LAYOUTS[family]}")
    if (data.get("hidden_size_per_layer_input") or 0) > 0:  # Gemma 4 E2B/E4B, as Gemma 3n
        raise BadInput(
            f"{path}: {model_type}: per-layer embeddings (hidden_size_per_layer_input) are not "
            "supported: their tables and per-layer widths are not read"
        )
    if family == "dbrx":
        data = _dbrx_flat(data)
    defaults = FAMILY_DEFAULTS.get(family, {})
    data = {**defaults, **{k: v for k, v in data.items() if v is not None or k not in defaults}}
    cfg = _Config(data, path)
    block_kinds = _nemotron_h_blocks(cfg) if family == "nemotron_h" else None
    if block_kinds is not None and not cfg.has("num_hidden_layers"):
        # NVIDIA-Nemotron-3-Ultra's config lists layers_block_type and has no layer count.
        cfg = _Config({**data, "num_hidden_layers": len(block_kinds)}, path)

    hidden = cfg.int_(HIDDEN, "hidden size", required=True)
    heads = cfg.int_(HEADS, "attention head count", required=True)
    vocab = cfg.int_(VOCAB, "vocabulary size", required=True)
    assert hidden is not None and heads is not None and vocab is not None
    for value, what in ((hidden, "hidden size"), (heads, "attention head count"), (vocab, "vocabulary size")):
        if value < 1:
            raise BadInput(f"{path}: {what} must be at least 1, got {value}")
    layers = _layers(cfg, family)
    kv_heads = _kv_heads(cfg, family, heads)
    head_dim = _head_dim(cfg, hidden, heads)
    intermediate = _intermediate(cfg, family, hidden)
    gated = _gated(cfg, family)
    experts = cfg.int_(
        ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"), "expert count", 1
    )
    experts = max(1, experts or 1)
    if experts > 1 and cfg.has("dense_intermediate_size"):
        # MiniMax-M3 writes the experts' width as intermediate_size (its VL copy has no
        # moe_intermediate_size) and the dense blocks' as dense_intermediate_size
        if not cfg.has("moe_intermediate_size"):
            cfg = _Config({**cfg.data, "moe_intermediate_size": intermediate}, path)
        intermediate = cfg.int_(("dense_intermediate_size",), "dense MLP width") or intermediate
    if cfg.has("routed_expert_hidden_size") and cfg.data["routed_expert_hidden_size"] != hidden:
        raise BadInput(
            f"{path}: {model_type}: experts in a latent space (routed_expert_hidden_size "
            f"{cfg.data['routed_expert_hidden_size']} beside hidden_size {hidden}) are not supported"
        )
    # HF layout is <model>/config.json; a differently named file names itself.
    folder = path.parent.name if path.name == "config.json" else ""
    name = str(data.get("_name_or_path") or folder or path.stem)

    fields: dict[str, Any] = dict(
        name=name,
        model_type=model_type,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=vocab,
        tied_embeddings=cfg.bool_("tie_word_embeddings", family in TIED_BY_DEFAULT),
        gated_mlp=gated,
        num_experts=experts,
        experts_per_token=min(
            experts,
            cfg.int_(
                (
                    "num_experts_per_tok",
                    "num_experts_per_token",
                    "experts_per_token",
                    "moe_top_k",
                    "top_k",
                    "top_k_experts",
                    "moe_k",
                    "moe_topk",
                ),
                "experts per token",
                1,
            )
            or 1,
        ),
        norm_type="layernorm" if family in LAYERNORM_TYPES else "rmsnorm",
        norms_per_layer=_norms_per_layer(cfg, family),
        gelu_new=str(
            cfg.first(ACTIVATION_KEYS, "activation", "")
            or ("gelu_new" if family in GELU_NEW_BY_DEFAULT else "")
        ).lower()
        == "gelu_new",
        qkv_bias=_qkv_bias(cfg, family),
        dense_bias=_dense_bias(cfg, family),
        position_embeddings=_position_embeddings(cfg, family),
        embedding_norm=family == "bloom",
        logit_softcapping=bool(data.get("final_logit_softcapping")),
        # q_proj also emits a sigmoid gate per head (Qwen3-Next / Qwen3.5 and others that say so)
        attention_output_gate=cfg.bool_("attn_output_gate", False)
        or cfg.bool_("use_attn_output_gate", False),
    )
    if experts > 1:
        fields.update(_moe_fields(cfg, layers, intermediate))
    if cfg.has("linear_num_value_heads"):  # Qwen3-Next / Qwen3.5 Gated DeltaNet blocks
        fields.update(_gated_deltanet_fields(cfg, layers))
    if block_kinds is not None:
        fields.update(_nemotron_h_fields(cfg, block_kinds, hidden))
    if family in SSM_LAYOUTS:
        fields.update(_ssm_fields(cfg, family, fields))
    if cfg.has("kv_lora_rank"):  # DeepSeek multi-head latent attention
        fields.update(_latent_attention_fields(cfg, head_dim))
    if family == "t5":
        fields["cross_attention_layers"] = _t5_decoder_layers(cfg)
    try:
        if cfg.has("block_configs"):  # Nemotron-NAS (DeciLM): per-block attention / FFN shapes
            fields.update(_nemotron_nas_fields(cfg, fields))
        return ModelArch(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ()))
        detail = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        raise BadInput(f"{path}: inconsistent config: {where + ': ' if where else ''}{detail}") from None


def _moe_fields(cfg: _Config, layers: int, intermediate: int) -> dict[str, Any]:
    """Mixture-of-experts widths: the expert MLP, shared experts (a count, or one wide shared
    expert counted in expert widths) and how many blocks are dense."""
    if cfg.has("intermediate_size_mlp"):
        return _llama4_moe_fields(cfg, layers)
    moe_width = cfg.int_(("moe_intermediate_size", "expert_intermediate_size"), "expert MLP width")
    shared = (
        cfg.int_(
            ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts", "num_shared_expert"),
            "shared expert count",
            0,
        )
        or 0
    )
    shared_width = cfg.int_(
        (
            "shared_expert_intermediate_size",
            "moe_shared_expert_intermediate_size",
            "shared_intermediate_size",
            "share_expert_dim",
        ),
        "shared expert width",
    )
    if cfg.bool_("enable_moe_block", False):
        # Gemma 4 (transformers' Gemma4TextDecoderLayer): every block with enable_moe_block runs
        # its dense Gemma4TextMLP (intermediate_size) beside the router and the routed experts and
        # sums the two: a shared expert of that width (26B-A4B: 2112 = 3 x 704).
        shared_width = intermediate
    if shared_width and (moe_width or intermediate):
        shared = max(shared, round(shared_width / (moe_width or intermediate)))
    dense = min(layers, cfg.int_(("first_k_dense_replace",), "leading dense layers", 0) or 0)
    # Qwen2-MoE / Qwen3-MoE (transformers' Qwen2MoeDecoderLayer): block i is sparse when i is not
    # in ``mlp_only_layers`` and (i + 1) % ``decoder_sparse_step`` == 0; the others are dense.
    step = cfg.int_(("decoder_sparse_step",), "sparse layer step", 1) or 1
    mlp_only = _layer_list(cfg, "mlp_only_layers", layers)
    if step > 1 or mlp_only:
        sparse = [i for i in range(layers) if i not in mlp_only and (i + 1) % step == 0]
        dense = layers - len(sparse)
    freq = cfg.data.get("moe_layer_freq")
    if isinstance(freq, list) and len(freq) == layers and all(v in (0, 1) for v in freq):
        # a 0/1 flag per block (MiniMax-M3, MiMo-V2-Flash): 0 is a dense block
        dense = sum(1 for v in freq if v == 0)
    elif isinstance(freq, int) and not isinstance(freq, bool) and freq > 1:
        # DeepSeek-V2 (transformers' DeepseekV2DecoderLayer): block i is sparse when
        # i >= first_k_dense_replace and i % moe_layer_freq == 0
        dense = layers - sum(1 for i in range(dense, layers) if i % freq == 0)
    if cfg.has("moe_layer_start_index"):
        # ERNIE 4.5 MoE (transformers' Ernie4_5_MoeDecoderLayer): block i is sparse when
        # start <= i <= end (end -1: the last block) and (i - start) % interval == 0.
        start = cfg.int_(("moe_layer_start_index",), "first MoE block", 0) or 0
        end = cfg.data.get("moe_layer_end_index")
        last = layers - 1 if not isinstance(end, int) or isinstance(end, bool) or end < 0 else end
        every = cfg.int_(("moe_layer_interval",), "MoE block interval", 1) or 1
        dense = layers - sum(1 for i in range(start, min(last, layers - 1) + 1) if (i - start) % every == 0)
    return {"moe_intermediate_size": moe_width, "num_shared_experts": shared, "dense_layers": dense}


def _llama4_moe_fields(cfg: _Config, layers: int) -> dict[str, Any]:
    """Llama 4 (transformers' modeling_llama4.py): ``intermediate_size`` is the width of each
    routed expert (``Llama4TextExperts.expert_dim``) and of the one ``shared_expert`` every
    ``Llama4TextMoe`` adds; dense blocks use ``Llama4TextMLP(intermediate_size=config.
    intermediate_size_mlp)``. Block i is MoE when it is in ``moe_layers``, which
    ``Llama4TextConfig`` defaults to range(step - 1, layers, step) with step =
    ``interleave_moe_layer_step`` (Scout 1: all 48 blocks; Maverick 2: every other one)."""
    expert_width = cfg.int_(INTERMEDIATE, "MLP width", required=True)
    dense_width = cfg.int_(("intermediate_size_mlp",), "dense MLP width", required=True)
    moe_layers = _layer_list(cfg, "moe_layers", layers)
    if not cfg.has("moe_layers"):
        step = cfg.int_(("interleave_moe_layer_step",), "MoE layer step", 1) or 1
        moe_layers = set(range(step - 1, layers, step))
    return {
        "intermediate_size": dense_width,
        "moe_intermediate_size": expert_width,
        "num_shared_experts": 1,
        "dense_layers": layers - len(moe_layers),
    }


def _gated_deltanet_fields(cfg: _Config, layers: int) -> dict[str, Any]:
    """Qwen3-Next / Qwen3.5 (transformers' Qwen3NextGatedDeltaNet): a block is linear attention
    unless ``layer_types`` says "full_attention" (without the list: every
    ``full_attention_interval``-th block). One linear mixer holds in_proj_qkvz (h -> 2 nk dk +
    2 nv dv), in_proj_ba (h -> 2 nv), a depthwise conv1d over q, k, v (kernel wide, no bias),
    dt_bias and A_log (nv each), a gated RMSNorm (dv) and out_proj (nv dv -> h). The full
    attention blocks' q_proj also emits the output gate (``attn_output_gate``, on in both)."""
    h = cfg.int_(HIDDEN, "hidden size", required=True) or 0
    nk = cfg.int_(("linear_num_key_heads",), "linear key head count", required=True) or 0
    nv = cfg.int_(("linear_num_value_heads",), "linear value head count", required=True) or 0
    dk = cfg.int_(("linear_key_head_dim",), "linear key head dim", required=True) or 0
    dv = cfg.int_(("linear_value_head_dim",), "linear value head dim", required=True) or 0
    kernel = cfg.int_(("linear_conv_kernel_dim",), "linear conv kernel", 4) or 0
    key_dim, value_dim = nk * dk, nv * dv
    mixer = h * (2 * key_dim + 2 * value_dim) + h * 2 * nv
    mixer += (2 * key_dim + value_dim) * kernel + 2 * nv + dv + value_dim * h
    kinds = cfg.data.get("layer_types")
    if isinstance(kinds, list) and len(kinds) == layers:
        linear = sum(1 for kind in kinds if kind == "linear_attention")
    else:
        every = cfg.int_(("full_attention_interval",), "full attention interval", 4) or 4
        linear = sum(1 for i in range(layers) if (i + 1) % every)
    return {
        "linear_attention_layers": linear,
        "linear_attention_params": mixer,
        "attention_output_gate": cfg.bool_("attn_output_gate", True),
        "linear_num_key_heads": nk,
        "linear_key_head_dim": dk,
        "linear_num_value_heads": nv,
        "linear_value_head_dim": dv,
        "linear_conv_kernel_dim": kernel,
    }


# Nemotron-H block kinds: hybrid_override_pattern's letters, layers_block_type's words.
_NEMOTRON_H_KINDS = {
    "M": "M",
    "*": "*",
    "E": "E",
    "-": "-",
    "mamba": "M",
    "attention": "*",
    "moe": "E",
    "mlp": "-",
}


def _nemotron_h_blocks(cfg: _Config) -> list[str] | None:
    pattern = cfg.data.get("hybrid_override_pattern")
    if pattern is None:
        pattern = cfg.data.get("layers_block_type")
    if pattern is None:
        return None
    items = list(pattern) if isinstance(pattern, str) else pattern
    if not isinstance(items, list) or not items or not all(item in _NEMOTRON_H_KINDS for item in items):
        raise BadInput(
            f"{cfg.path}: hybrid_override_pattern / layers_block_type must list blocks as M * E - "
            f"(mamba attention moe mlp), got {str(pattern)[:80]!r}"
        )
    return [_NEMOTRON_H_KINDS[item] for item in items]


def _nemotron_h_fields(cfg: _Config, kinds: list[str], hidden: int) -> dict[str, Any]:
    """Nemotron-H (transformers' modeling_nemotron_h.py): each block is one norm and one of a
    Mamba-2 mixer (M), attention (*), an MoE (E) or a squared-ReLU MLP (-). The Mamba-2 mixer
    (NemotronHMamba2Mixer) holds in_proj (h -> 2 d_inner + 2 groups state + heads), a depthwise
    conv1d over d_inner + 2 groups state channels (kernel wide, ``use_conv_bias``), dt_bias,
    A_log and D (heads each), a gated RMSNorm (d_inner) and out_proj (d_inner -> h), d_inner =
    mamba_num_heads x mamba_head_dim."""
    if len(kinds) != cfg.int_(LAYERS, "layer count"):
        raise BadInput(
            f"{cfg.path}: hybrid_override_pattern has {len(kinds)} blocks, num_hidden_layers says otherwise"
        )
    heads = cfg.int_(("mamba_num_heads",), "Mamba head count", required=True) or 0
    d_inner = heads * (cfg.int_(("mamba_head_dim",), "Mamba head dim", required=True) or 0)
    groups = cfg.int_(("n_groups",), "Mamba group count", 1) or 1
    state = cfg.int_(("ssm_state_size",), "SSM state size", required=True) or 0
    kernel = cfg.int_(("conv_kernel",), "Mamba conv kernel", 4) or 0
    conv = d_inner + 2 * groups * state
    mixer = hidden * (d_inner + conv + heads) + conv * kernel + 3 * heads + d_inner + d_inner * hidden
    if cfg.bool_("use_conv_bias", True):
        mixer += conv
    if cfg.bool_("use_bias", False):
        mixer += d_inner + conv + heads + hidden
    latent = cfg.int_(("moe_latent_size",), "MoE latent size")
    return {
        "linear_attention_layers": kinds.count("M"),
        "linear_attention_params": mixer,
        "mixer_free_layers": kinds.count("E") + kinds.count("-"),
        "mlp_free_layers": kinds.count("M") + kinds.count("*"),
        "dense_layers": kinds.count("-"),
        "norms_per_layer": 1,
        "moe_latent_size": latent or None,
    }


def _nas_intermediate_size(ffn_mult: float, hidden: int) -> int:
    """DeciLM's ``_ffn_mult_to_intermediate_size``: int(2 ffn_mult h / 3) rounded up to a
    multiple of 256."""
    width = int(2 * ffn_mult * hidden / 3)
    return width if width % 256 == 0 else width + 256 - width % 256


def _nas_part(cfg: _Config, block: Any, part: str, index: int) -> Mapping[str, Any]:
    value = block.get(part) if isinstance(block, Mapping) else None
    if not isinstance(value, Mapping):
        raise BadInput(f"{cfg.path}: block_configs[{index}] has no {part} object")
    return value


def _nemotron_nas_fields(cfg: _Config, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Nemotron-NAS / DeciLM (``block_configs``: Llama-3.3-Nemotron-Super-49B,
    Llama-3.1-Nemotron-Ultra-253B). As the modelling code builds each block
    (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/models/modeling_nemotron_nas.py @ 0193dbd4,
    NemotronNASDecoderLayer, the port of the models' modeling_decilm.py): attention that is not
    ``no_op`` brings input_layernorm and either a bias-free h x h linear (``replace_with_linear``)
    or Llama attention with num_heads // ``n_heads_in_group`` KV heads; an FFN that is not
    ``no_op`` brings post_attention_layernorm and either an h x h linear or a gated MLP of width
    ``_ffn_mult_to_intermediate_size(ffn_mult, h)``. A block may hold neither (Ultra: 81 of 162).

    ModelArch has one shape for all blocks, so the blocks are mapped onto it: no-op attention
    blocks are ``mixer_free_layers``, no-op FFN blocks ``mlp_free_layers``, linear attention
    blocks linear mixers of h x h weights; KV heads are the mean over attention blocks (or, when
    that is not a divisor of the head count, the nearest divisor), norms per block the nearest
    whole number, and ``intermediate_size`` is the width that makes the blocks' total equal the
    per-block sum: a mean over the MLP-bearing blocks that also carries the linear FFNs' h x h,
    the norm rounding and any KV-head rounding. The total is then exact to within the rounding of
    that mean (under 1.5 h parameters per MLP block)."""
    blocks = cfg.data["block_configs"]
    layers = int(fields["num_layers"])
    if not isinstance(blocks, list) or len(blocks) != layers:
        count = len(blocks) if isinstance(blocks, list) else "no"
        raise BadInput(f"{cfg.path}: block_configs lists {count} blocks, num_hidden_layers says {layers}")
    h, heads = int(fields["hidden_size"]), int(fields["num_heads"])
    probe = ModelArch(**{**fields, "num_kv_heads": heads, "gated_mlp": True})
    exact = 0
    kv_heads: list[int] = []
    linear_attention = attention_free = linear_ffn = ffn_free = norms = empty = 0
    for i, block in enumerate(blocks):
        attention, ffn = _nas_part(cfg, block, "attention", i), _nas_part(cfg, block, "ffn", i)
        if attention.get("no_op") and ffn.get("no_op"):
            empty += 1
        if attention.get("no_op"):
            attention_free += 1
        else:
            norms += 1
            if attention.get("replace_with_linear"):
                linear_attention += 1
                exact += h * h
            else:
                group = attention.get("n_heads_in_group")
                if not isinstance(group, int) or isinstance(group, bool) or group < 1 or heads % group:
                    raise BadInput(
                        f"{cfg.path}: block_configs[{i}].attention.n_heads_in_group must divide "
                        f"{heads} heads, got {group!r}"
                    )
                kv_heads.append(heads // group)
                exact += probe.model_copy(update={"num_kv_heads": heads // group}).attention_params()
        if ffn.get("no_op"):
            ffn_free += 1
        else:
            norms += 1
            if ffn.get("replace_with_linear"):
                linear_ffn += 1
                exact += h * h
            else:
                mult = ffn.get("ffn_mult")
                if isinstance(mult, bool) or not isinstance(mult, (int, float)) or not 0 < mult < 1e4:
                    raise BadInput(f"{cfg.path}: block_configs[{i}].ffn.ffn_mult must be a positive number")
                exact += probe.mlp_params(_nas_intermediate_size(mult, h))
    exact += norms * probe.norm_params()
    kv = heads
    if kv_heads:
        mean = sum(kv_heads) / len(kv_heads)
        kv = min((d for d in range(1, heads + 1) if heads % d == 0), key=lambda d: (abs(d - mean), d))
    uniform: dict[str, Any] = {
        "num_kv_heads": kv,
        "gated_mlp": True,
        "norms_per_layer": round(norms / layers),
        "linear_attention_layers": linear_attention,
        "linear_attention_params": h * h if linear_attention else 0,
        "mixer_free_layers": attention_free,
        "mlp_free_layers": ffn_free,
        "empty_layers": empty,
        "intermediate_size": 1,
    }
    one = probe.model_copy(update=uniform)
    mlp_blocks = layers - ffn_free
    if mlp_blocks:
        per_width = mlp_blocks * (probe.mlp_params(2) - probe.mlp_params(1))
        # the hybrid count with width 1, then the width whose MLPs close the gap to the exact sum
        uniform["intermediate_size"] = max(1, 1 + round((exact - one._blocks_params(False)) / per_width))
    return uniform


def _layer_list(cfg: _Config, key: str, layers: int) -> set[int]:
    """A config's list of block indices (``mlp_only_layers``, ``moe_layers``), checked."""
    value = cfg.data.get(key)
    if value is None:
        return set()
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers for i in value
    ):
        raise BadInput(f"{cfg.path}: {key} must be a list of block indices 0-{layers - 1}, got {value!r}")
    return set(value)


def _latent_attention_fields(cfg: _Config, head_dim: int) -> dict[str, Any]:
    """DeepSeek multi-head latent attention: the latent ranks and the split query/key head."""
    rope = cfg.int_(("qk_rope_head_dim",), "RoPE head dim", 0) or 0
    nope = cfg.int_(("qk_nope_head_dim",), "non-RoPE head dim", head_dim) or head_dim
    return {
        "kv_lora_rank": cfg.int_(("kv_lora_rank",), "KV latent rank"),
        "q_lora_rank": cfg.int_(("q_lora_rank",), "Q latent rank"),
        "qk_rope_head_dim": rope,
        "v_head_dim": cfg.int_(("v_head_dim",), "value head dim", nope),
        "head_dim": nope + rope,
    }


def _t5_decoder_layers(cfg: _Config) -> int:
    encoder = cfg.int_(("num_layers",), "layer count", required=True)
    return cfg.int_(("num_decoder_layers",), "decoder layer count", encoder) or 0


def _layers(cfg: _Config, family: str) -> int:
    if family == "t5":  # encoder + decoder blocks
        encoder = cfg.int_(("num_layers",), "layer count", required=True)
        assert encoder is not None
        return encoder + _t5_decoder_layers(cfg)
    layers = cfg.int_(LAYERS, "layer count", required=True)
    if not layers:
        raise BadInput(f"{cfg.path}: layer count must be at least 1")
    return layers


def _kv_heads(cfg: _Config, family: str, heads: int) -> int:
    if family in FALCON:
        if _falcon_new_decoder(cfg, family):
            return cfg.int_(("num_kv_heads", "n_head_kv"), "KV head count", heads) or heads
        if cfg.has("n_head_kv"):
            return cfg.int_(("n_head_kv",), "KV head count") or 1
        return 1 if cfg.bool_("multi_query", True) else heads
    if family == "chatglm":
        if cfg.bool_("multi_query_attention", False):
            return cfg.int_(("multi_query_group_num",), "KV group count", heads) or heads
        return heads
    if cfg.bool_("multi_query", False):  # gpt_bigcode
        return 1
    kv = cfg.int_(
        ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"), "KV head count", heads
    )
    return kv or heads


def _falcon_new_decoder(cfg: _Config, family: str) -> bool:
    """Falcon-40B/180B layout: grouped KV heads and separate attention / MLP norms."""
    return cfg.bool_("new_decoder_architecture", family == "falcon_new")


def _head_dim(cfg: _Config, hidden: int, heads: int) -> int:
    explicit = cfg.int_(("head_dim", "d_kv", "kv_channels", "attention_head_dim"), "head dim")
    return explicit or max(1, hidden // heads)


def _intermediate(cfg: _Config, family: str, hidden: int) -> int:
    width = cfg.int_(INTERMEDIATE, "MLP width")
    ratio = cfg.first(("expansion_ratio",), "MLP expansion ratio")  # MPT
    if width is None and isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and ratio > 0:
        if not ratio * hidden <= MAX_CONFIG_INTEGER:
            raise BadInput(f"{cfg.path}: MLP expansion ratio {ratio:g} gives no model's MLP width")
        return int(round(ratio * hidden))
    if width is None:  # GPT-2, Falcon, BLOOM, StarCoder: 4h when unspecified
        return 4 * hidden
    if family == "qwen":  # Qwen-1 stores twice the real width (its MLP halves it)
        return width // 2
    return width


def _gated(cfg: _Config, family: str) -> bool:
    if family == "t5":
        return str(cfg.data.get("feed_forward_proj", "relu")).startswith("gated")
    if family in GATED_TYPES:
        return True
    if family in UNGATED_TYPES:
        return False
    act = str(cfg.first(ACTIVATION_KEYS, "activation", "")).lower()
    return act not in UNGATED_ACTIVATIONS


def _norms_per_layer(cfg: _Config, family: str) -> int:
    if family in PARALLEL_BLOCK_TYPES:
        return 1
    if family in FALCON:
        return 2 if _falcon_new_decoder(cfg, family) else 1
    if family == "gemma4_text":  # 4, plus pre_feedforward_layernorm_2 and post_feedforward_layernorm_1/_2
        return 7 if cfg.bool_("enable_moe_block", False) else 4
    if family in ("gemma2", "gemma3_text", "olmo2"):
        return 4 if family != "olmo2" else 2
    return 2


def _qkv_bias(cfg: _Config, family: str) -> bool:
    if family in FALCON:
        return cfg.bool_("bias", False)
    if family == "mpt" and cfg.has("no_bias"):  # mosaicml/mpt-7b: "no_bias": true
        return not cfg.bool_("no_bias", False)
    for key in ("attention_bias", "add_qkv_bias", "qkv_bias", "use_qkv_bias"):
        if cfg.has(key):
            return bool(cfg.data[key])
    return family in QKV_BIAS_TYPES


def _dense_bias(cfg: _Config, family: str) -> bool:
    if family in FALCON:
        return cfg.bool_("bias", False)
    if family == "mpt" and cfg.has("no_bias"):
        return not cfg.bool_("no_bias", False)
    if cfg.has("mlp_bias"):
        return bool(cfg.data["mlp_bias"])
    return family in BIASED_TYPES


def _position_embeddings(cfg: _Config, family: str) -> int:
    if family in ("gpt_bigcode", "gpt2", "gpt_neo"):  # learned absolute positions (wpe)
        return cfg.int_(("n_positions", "max_position_embeddings"), "position count", 0) or 0
    if family == "opt":
        return (cfg.int_(("max_position_embeddings",), "position count", 0) or 0) + 2
    return 0


def _dbrx_flat(data: Mapping[str, Any]) -> dict[str, Any]:
    """DBRX (transformers' DbrxConfig) keeps its MoE and KV settings in nested ``ffn_config``
    (ffn_hidden_size, moe_num_experts, moe_top_k) and ``attn_config`` (kv_n_heads): read them as
    top-level fields, the top level winning."""
    flat: dict[str, Any] = {}
    for key in ("ffn_config", "attn_config"):
        nested = data.get(key)
        if isinstance(nested, Mapping):
            flat.update({k: v for k, v in nested.items() if v is not None})
    if "kv_n_heads" in flat:
        flat["num_key_value_heads"] = flat.pop("kv_n_heads")
    return {**flat, **{k: v for k, v in data.items() if v is not None or k not in flat}}


def _mamba1_mixer(cfg: _Config, h: int, d_inner: int, prefix: str, inner_norms: bool) -> int:
    """One Mamba-1 mixer (transformers' MambaMixer / FalconMambaMixer / JambaMambaMixer):
    in_proj (h -> 2 d_inner), a depthwise conv1d (kernel wide), x_proj (d_inner -> dt_rank + 2
    state), dt_proj (dt_rank -> d_inner, with bias), A_log (d_inner x state), D (d_inner) and
    out_proj (d_inner -> h); Jamba adds RMSNorms over dt, B and C (dt_rank + 2 state)."""
    state = cfg.int_((f"{prefix}d_state", "state_size"), "SSM state size", 16) or 16
    kernel = cfg.int_((f"{prefix}d_conv", "conv_kernel"), "Mamba conv kernel", 4) or 4
    rank_value = cfg.data.get(f"{prefix}dt_rank", cfg.data.get("time_step_rank"))
    if rank_value is None or rank_value == "auto":
        rank = math.ceil(h / 16)
    else:
        rank = cfg.int_((f"{prefix}dt_rank", "time_step_rank"), "time step rank") or 1
    mixer = h * 2 * d_inner + d_inner * kernel + d_inner * (rank + 2 * state)
    mixer += rank * d_inner + d_inner + d_inner * state + d_inner + d_inner * h
    if cfg.bool_(f"{prefix}conv_bias" if prefix else "use_conv_bias", True):
        mixer += d_inner
    if cfg.bool_(f"{prefix}proj_bias" if prefix else "use_bias", False):
        mixer += 2 * d_inner + h
    if inner_norms:
        mixer += rank + 2 * state
    return mixer


def _mamba2_mixer(
    cfg: _Config, h: int, d_inner: int, heads: int, prefix: str, gated_norm: bool, out_bias: bool
) -> int:
    """One Mamba-2 mixer (transformers' Mamba2Mixer / BambaMixer / GraniteMoeHybridMambaLayer /
    FalconH1Mixer): in_proj (h -> 2 d_inner + 2 groups state + heads), a depthwise conv1d over
    d_inner + 2 groups state channels, dt_bias, A_log and D (heads each), a gated RMSNorm
    (d_inner; Falcon-H1 only with ``mamba_rms_norm``) and out_proj (d_inner -> h)."""
    groups = cfg.int_((f"{prefix}n_groups",), "Mamba group count", 1) or 1
    state = cfg.int_((f"{prefix}d_state", "state_size"), "SSM state size", 128) or 0
    kernel = cfg.int_((f"{prefix}d_conv", "conv_kernel"), "Mamba conv kernel", 4) or 0
    conv = d_inner + 2 * groups * state
    mixer = h * (d_inner + conv + heads) + conv * kernel + 3 * heads + d_inner * h
    if cfg.bool_(f"{prefix}conv_bias" if prefix else "use_conv_bias", True):
        mixer += conv
    if cfg.bool_(f"{prefix}proj_bias" if prefix else "use_bias", False):
        mixer += d_inner + conv + heads
    if out_bias:
        mixer += h
    if gated_norm:
        mixer += d_inner
    return mixer


def _block_kinds(cfg: _Config, layers: int, attention: set[int]) -> list[str]:
    """``layer_types`` / ``layers_block_type`` when the config lists them, else the blocks in
    ``attention`` are attention and the rest Mamba."""
    kinds = cfg.data.get("layer_types", cfg.data.get("layers_block_type"))
    if isinstance(kinds, list) and kinds:
        if len(kinds) != layers:
            raise BadInput(
                f"{cfg.path}: layer_types lists {len(kinds)} blocks, num_hidden_layers says {layers}"
            )
        return ["attention" if "attention" in str(kind) else "mamba" for kind in kinds]
    return ["attention" if i in attention else "mamba" for i in range(layers)]


def _ssm_fields(cfg: _Config, family: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """State-space decoders, read as the hybrid fields (``linear_attention_layers`` blocks hold a
    Mamba mixer of ``linear_attention_params`` weights in place of attention):

    - mamba / falcon_mamba (MambaForCausalLM): every block one RMSNorm and a Mamba-1 mixer, no
      attention, no MLP; mamba2 likewise with a Mamba-2 mixer.
    - jamba (JambaConfig.layers_block_type): block i is attention when i % attn_layer_period ==
      attn_layer_offset, else Mamba-1; its MLP is the MoE when i % expert_layer_period ==
      expert_layer_offset, else dense; two norms per block.
    - bamba (``attn_layer_indices``) and granitemoehybrid (``layer_types``): attention or a
      Mamba-2 mixer, then an MLP; Granite 4.0's MLP is ``shared_mlp`` (shared_intermediate_size)
      plus, with num_local_experts > 0, routed experts of intermediate_size beside it.
    - falcon_h1: every block runs attention and a Mamba-2 mixer side by side off one norm, then
      an MLP off a second. ModelArch counts one mixer per block, so each block is read as two:
      attention + MLP, and a Mamba-2 mixer alone, one norm each (2 x layers blocks; the weights,
      norms included, are exact; the mixers' FLOPs and saved tensors are counted once each)."""
    h = int(fields["hidden_size"])
    layers = int(fields["num_layers"])
    if family in ("mamba", "falcon_mamba"):
        d_inner = cfg.int_(("intermediate_size",), "Mamba inner width") or 2 * h
        if not cfg.has("intermediate_size"):
            d_inner = int((cfg.first(("expand",), "Mamba expand", 2) or 2) * h)
        mixer = _mamba1_mixer(cfg, h, d_inner, "", inner_norms=False)
        return _mixer_only(layers, mixer, d_inner)
    if family == "mamba2":
        heads = cfg.int_(("num_heads",), "Mamba head count", required=True) or 1
        d_inner = int((cfg.first(("expand",), "Mamba expand", 2) or 2) * h)
        mixer = _mamba2_mixer(cfg, h, d_inner, heads, "", True, cfg.bool_("use_bias", False))
        return _mixer_only(layers, mixer, d_inner)
    prefix = "mamba_"
    d_inner = int((cfg.first(("mamba_expand",), "Mamba expand", 2) or 2) * h)
    if family == "jamba":
        period = cfg.int_(("attn_layer_period",), "attention block period", 8) or 1
        offset = cfg.int_(("attn_layer_offset",), "attention block offset", 4) or 0
        kinds = _block_kinds(cfg, layers, {i for i in range(layers) if i % period == offset})
        mixer = _mamba1_mixer(cfg, h, d_inner, prefix, inner_norms=True)
        out: dict[str, Any] = {
            "linear_attention_layers": kinds.count("mamba"),
            "linear_attention_params": mixer,
        }
        if int(fields["num_experts"]) > 1:
            e_period = cfg.int_(("expert_layer_period",), "expert block period", 2) or 1
            e_offset = cfg.int_(("expert_layer_offset",), "expert block offset", 1) or 0
            out["dense_layers"] = sum(1 for i in range(layers) if i % e_period != e_offset)
            out["num_shared_experts"] = 0
        return out
    heads = cfg.int_(("mamba_n_heads",), "Mamba head count", 128) or 1
    if family == "falcon_h1":
        d_inner = cfg.int_(("mamba_d_ssm",), "Mamba inner width") or d_inner
        mixer = _mamba2_mixer(
            cfg,
            h,
            d_inner,
            heads,
            prefix,
            cfg.bool_("mamba_rms_norm", False),
            cfg.bool_("projectors_bias", False),
        )
        return {
            "num_layers": 2 * layers,
            "linear_attention_layers": layers,
            "linear_attention_params": mixer,
            "mlp_free_layers": layers,
            "parallel_mixer_blocks": layers,
            "norms_per_layer": 1,
        }
    mixer = _mamba2_mixer(cfg, h, d_inner, heads, prefix, True, cfg.bool_("mamba_proj_bias", False))
    indices = cfg.data.get("attn_layer_indices")
    attention = {i for i in indices if isinstance(i, int)} if isinstance(indices, list) else set()
    kinds = _block_kinds(cfg, layers, attention)
    out = {"linear_attention_layers": kinds.count("mamba"), "linear_attention_params": mixer}
    if family == "granitemoehybrid":
        shared = cfg.int_(("shared_intermediate_size",), "shared MLP width", 1024) or 1
        if int(fields["num_experts"]) > 1:
            width = int(fields["intermediate_size"])
            out.update(num_shared_experts=max(1, round(shared / width)), dense_layers=0)
        else:
            out["intermediate_size"] = shared
    return out


def _mixer_only(layers: int, mixer: int, d_inner: int) -> dict[str, Any]:
    """Every block one norm and one SSM mixer, no attention and no MLP (``intermediate_size``
    is then unread; it holds the mixer's inner width)."""
    return {
        "linear_attention_layers": layers,
        "linear_attention_params": mixer,
        "mlp_free_layers": layers,
        "norms_per_layer": 1,
        "intermediate_size": d_inner,
    }
