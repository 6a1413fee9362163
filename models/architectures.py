"""Transformer architecture shapes and their parameter counts.

A :class:`ModelArch` is the handful of numbers the memory-fit and cost models need. It comes from
the built-in catalog (``model_catalog.json``, keyed by Hugging Face repo id), from a Hugging Face
``config.json`` (:mod:`models.hf_config`) or, when only a size is known, from a representative dense
shape scaled to that size (:func:`shape_for_params`).

Slightly over ~400 lines: the shape, its parameter count by block kind, the catalog and the one
rule resolving a model name, config or size are one job (what the model is).
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from gpuprice.errors import BadInput, unknown_choice
from gpuprice.models.hf_families import GELU_NEW_BY_DEFAULT

CATALOG_PATH = Path(__file__).with_name("model_catalog.json")

NormType = Literal["rmsnorm", "layernorm"]
# Model types whose modelling code computes softmax(Q K^T + bias) V explicitly and has no fused
# (SDPA / FlashAttention) path in transformers: ALiBi (``BloomAttention``: ``alibi.baddbmm(query,
# key)`` then ``F.softmax(..., dtype=torch.float32)``; ``MptAttention``; Baichuan-13B's remote code)
# and T5's relative position bias (``T5Attention``: ``scores += position_bias``). They keep a
# seq x seq score matrix per head whatever kernel is asked for.
EXPLICIT_SCORE_MODEL_TYPES = frozenset({"bloom", "mpt", "baichuan", "t5", "mt5"})


class ModelArch(BaseModel):
    """Shape of a decoder (or encoder-decoder) transformer; parameter counts are derived."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model_type: str
    hidden_size: int = Field(ge=1)
    num_layers: int = Field(ge=1, description="all transformer blocks (encoder + decoder for T5)")
    num_heads: int = Field(ge=1)
    num_kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    intermediate_size: int = Field(ge=1, description="MLP width of a dense block")
    vocab_size: int = Field(ge=1)
    tied_embeddings: bool
    gated_mlp: bool = Field(description="SwiGLU/GeGLU: three matrices per MLP instead of two")
    num_experts: int = Field(default=1, ge=1, description="1 = dense")
    experts_per_token: int = Field(default=1, ge=1)
    # Details that move the parameter count by a few percent.
    norm_type: NormType = "rmsnorm"
    norms_per_layer: int = Field(default=2, ge=0)
    qkv_bias: bool = False
    dense_bias: bool = Field(default=False, description="biases on the output and MLP projections")
    position_embeddings: int = Field(default=0, ge=0, description="rows of a learned position table")
    embedding_norm: bool = False
    moe_intermediate_size: int | None = Field(default=None, ge=1)
    num_shared_experts: int = Field(default=0, ge=0)
    dense_layers: int = Field(
        default=0, ge=0, description="dense blocks of an MoE model (leading or interleaved)"
    )
    # Multi-head latent attention (DeepSeek-V2): K/V come from a low-rank latent.
    kv_lora_rank: int | None = Field(default=None, ge=1)
    q_lora_rank: int | None = Field(default=None, ge=1)
    qk_rope_head_dim: int = Field(default=0, ge=0)
    v_head_dim: int | None = Field(default=None, ge=1)
    cross_attention_layers: int = Field(default=0, ge=0, description="T5 decoder blocks")
    # config.json ``final_logit_softcapping`` (Gemma 2: 30.0): transformers' Gemma2ForCausalLM
    # computes logits / cap, tanh, * cap; tanh's backward reads its output, so one more
    # logits-sized tensor is saved beside the logits the loss reads.
    logit_softcapping: bool = False
    # Hybrid decoders. Qwen3-Next / Qwen3.5 (``layer_types``) run a Gated DeltaNet in place of
    # attention in most blocks; Nemotron-H (``hybrid_override_pattern``) has blocks that are one
    # Mamba-2 mixer, one attention, one MoE or one MLP. ``linear_attention_params`` is one such
    # mixer's weights (the reader computes it: its shapes are the family's).
    linear_attention_layers: int = Field(default=0, ge=0, description="blocks with a linear/SSM mixer")
    linear_attention_params: int = Field(default=0, ge=0, description="weights of one linear/SSM mixer")
    mixer_free_layers: int = Field(default=0, ge=0, description="blocks with only an MLP / MoE")
    mlp_free_layers: int = Field(default=0, ge=0, description="blocks with only a mixer")
    # Nemotron-NAS blocks with neither (no-op attention and no-op FFN: an identity), counted in
    # both fields above; the counts alone cannot tell them from blocks holding one part each.
    empty_layers: int = Field(default=0, ge=0, description="blocks with neither a mixer nor an MLP")
    # Falcon-H1 runs attention and a Mamba-2 mixer side by side off one norm in every decoder
    # layer; the reader lists each layer as two blocks (attention + MLP, the mixer alone) so the
    # weights stay exact. These mixer blocks have no input, rebuild or per-layer cost of their own.
    parallel_mixer_blocks: int = Field(
        default=0, ge=0, description="mixer-only blocks that run beside another block, off its input"
    )
    # Qwen3-Next / Qwen3.5 ``attn_output_gate``: q_proj also emits a sigmoid gate per head.
    attention_output_gate: bool = False
    # Qwen3-Next / Qwen3.5 Gated DeltaNet head widths (config.json ``linear_num_key_heads``,
    # ``linear_key_head_dim``, ``linear_num_value_heads``, ``linear_value_head_dim``,
    # ``linear_conv_kernel_dim``): the memory model counts the mixer's saved tensors from them
    # (memory_features.gated_deltanet_elements). 0: not a Gated DeltaNet model.
    linear_num_key_heads: int = Field(default=0, ge=0, description="Gated DeltaNet key heads")
    linear_key_head_dim: int = Field(default=0, ge=0, description="Gated DeltaNet key head dim")
    linear_num_value_heads: int = Field(default=0, ge=0, description="Gated DeltaNet value heads")
    linear_value_head_dim: int = Field(default=0, ge=0, description="Gated DeltaNet value head dim")
    linear_conv_kernel_dim: int = Field(default=0, ge=0, description="Gated DeltaNet conv1d kernel")
    # Nemotron-3 latent MoE (``moe_latent_size``): routed experts work in a narrower latent,
    # entered and left through one h x latent projection each per MoE block.
    moe_latent_size: int | None = Field(default=None, ge=1)
    # The MLP activation is config.json's "gelu_new": transformers' Python tanh formula, which keeps
    # more than torch's fused GELU (memory_features).
    gelu_new: bool = False
    # True for :func:`shape_for_params`' stand-in: the real shape is unknown, so the answer carries
    # the wider band of runs predicted from their size alone (models/memory_band.py).
    representative: bool = False

    @model_validator(mode="before")
    @classmethod
    def _family_defaults(cls, data: object) -> object:
        # Catalog entries (config.json values) leave the activation to the family's transformers
        # default.
        if isinstance(data, dict) and "model_type" in data and "gelu_new" not in data:
            data = {**data, "gelu_new": str(data["model_type"]) in GELU_NEW_BY_DEFAULT}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ModelArch:
        if self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"{self.name}: num_heads {self.num_heads} is not a multiple of num_kv_heads {self.num_kv_heads}"
            )
        if self.experts_per_token > self.num_experts:
            raise ValueError(f"{self.name}: experts_per_token exceeds num_experts")
        if self.dense_layers > self.num_layers or self.cross_attention_layers > self.num_layers:
            raise ValueError(f"{self.name}: more dense/cross-attention layers than layers")
        if self.linear_attention_layers + self.mixer_free_layers > self.num_layers:
            raise ValueError(f"{self.name}: more linear-attention and MLP-only blocks than layers")
        if self.dense_layers + self.mlp_free_layers > self.num_layers:
            raise ValueError(f"{self.name}: more dense and mixer-only blocks than layers")
        if self.empty_layers > min(self.mixer_free_layers, self.mlp_free_layers):
            raise ValueError(f"{self.name}: more empty blocks than mixer-free or MLP-free blocks")
        if self.parallel_mixer_blocks > min(self.linear_attention_layers, self.mlp_free_layers):
            raise ValueError(f"{self.name}: more parallel mixer blocks than mixer-only blocks")
        return self

    # ----- widths -------------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    @property
    def q_width(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_width(self) -> int:
        return self.num_kv_heads * self.head_dim

    @property
    def attn_out_width(self) -> int:
        """Width entering the output projection (v_head_dim per head under MLA)."""
        return self.num_heads * (self.v_head_dim or self.head_dim)

    @property
    def expert_width(self) -> int:
        return self.moe_intermediate_size or self.intermediate_size

    # ----- per-block parameter counts -----------------------------------------------------
    def norm_params(self) -> int:
        return self.hidden_size * (2 if self.norm_type == "layernorm" else 1)

    def attention_params(self) -> int:
        """One self-attention sub-block (projections + biases)."""
        h = self.hidden_size
        if self.kv_lora_rank is not None:  # MLA
            nope = self.head_dim - self.qk_rope_head_dim
            v_dim = self.v_head_dim or nope
            if self.q_lora_rank:
                q = h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * self.q_width
            else:
                q = h * self.q_width
            kv = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank
            kv += self.kv_lora_rank * self.num_heads * (nope + v_dim)
            return q + kv + self.attn_out_width * h
        q_out = self.q_width * (2 if self.attention_output_gate else 1)
        params = h * (q_out + 2 * self.kv_width) + self.attn_out_width * h
        if self.qkv_bias:
            params += q_out + 2 * self.kv_width
        if self.dense_bias:
            params += h
        return params

    def mlp_params(self, width: int) -> int:
        """One MLP (or one expert) of the given intermediate width."""
        h = self.hidden_size
        matrices = 3 if self.gated_mlp else 2
        params = matrices * h * width
        if self.dense_bias:
            params += (matrices - 1) * width + h
        return params

    def dense_block_params(self) -> int:
        return (
            self.attention_params()
            + self.mlp_params(self.intermediate_size)
            + self.norms_per_layer * self.norm_params()
        )

    def moe_mlp_params(self, active_only: bool = False) -> int:
        """One MoE sub-block: routed experts (all, or the routed ones a token uses), shared
        experts, router and, for a latent MoE, the projections into and out of the latent."""
        experts = self.experts_per_token if active_only else self.num_experts
        routed = experts * self.mlp_params(self.expert_width)
        if self.moe_latent_size:
            latent = self.model_copy(update={"hidden_size": self.moe_latent_size})
            routed = (
                experts * latent.mlp_params(self.expert_width) + 2 * self.hidden_size * self.moe_latent_size
            )
        return (
            routed
            + self.num_shared_experts * self.mlp_params(self.expert_width)
            + self.hidden_size * self.num_experts  # router
        )

    def moe_block_params(self, active_only: bool = False) -> int:
        return (
            self.attention_params()
            + self.moe_mlp_params(active_only)
            + self.norms_per_layer * self.norm_params()
        )

    def _blocks_params(self, active_only: bool) -> int:
        if self.linear_attention_layers or self.mixer_free_layers or self.mlp_free_layers:
            return self._hybrid_blocks_params(active_only)
        moe_layers = self.num_layers - self.dense_layers if self.is_moe else 0
        dense_layers = self.num_layers - moe_layers
        total = dense_layers * self.dense_block_params()
        if moe_layers:
            total += moe_layers * self.moe_block_params(active_only)
        total += self.cross_attention_layers * (self.attention_params() + self.norm_params())
        return total

    def _hybrid_blocks_params(self, active_only: bool) -> int:
        """Blocks counted by part: mixers (softmax attention or linear/SSM), MLPs (dense or
        MoE) and norms, for decoders whose blocks do not all hold one of each."""
        attention_layers = self.num_layers - self.linear_attention_layers - self.mixer_free_layers
        mixers = attention_layers * self.attention_params()
        mixers += self.linear_attention_layers * self.linear_attention_params
        mlp_layers = self.num_layers - self.mlp_free_layers
        moe_layers = mlp_layers - self.dense_layers if self.is_moe else 0
        mlps = (mlp_layers - moe_layers) * self.mlp_params(self.intermediate_size)
        if moe_layers:
            mlps += moe_layers * self.moe_mlp_params(active_only)
        return mixers + mlps + self.num_layers * self.norms_per_layer * self.norm_params()

    @property
    def embedding_params(self) -> int:
        """Token (+ learned position) embeddings and the embedding norm, without the LM head."""
        params = (self.vocab_size + self.position_embeddings) * self.hidden_size
        if self.embedding_norm:
            params += self.norm_params()
        return params

    @property
    def head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab_size * self.hidden_size

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_params(self) -> int:
        """Total parameters (all experts)."""
        return self._blocks_params(False) + self.embedding_params + self.head_params + self.norm_params()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_active_params(self) -> int:
        """Parameters one token touches (routed experts only, embeddings and head included)."""
        return self._blocks_params(True) + self.embedding_params + self.head_params + self.norm_params()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def largest_layer_params(self) -> int:
        """Largest unit ZeRO-3/FSDP gathers at once: one whole block, or the embedding matrix."""
        block = self.moe_block_params() if self.is_moe else self.dense_block_params()
        if self.cross_attention_layers:
            block = max(block, self.dense_block_params() + self.attention_params())
        return max(block, self.vocab_size * self.hidden_size)

    @property
    def quantizable_params(self) -> int:
        """Weights of the linear layers inside blocks: what QLoRA stores in 4 bits.

        Embeddings, LM head, norms, biases and the MoE router stay in 16-bit (bitsandbytes
        leaves them unquantized)."""
        bare = self.model_copy(update={"qkv_bias": False, "dense_bias": False, "norms_per_layer": 0})
        moe_layers = self.num_layers - self.mlp_free_layers - self.dense_layers if self.is_moe else 0
        router = moe_layers * self.hidden_size * self.num_experts
        cross_norms = self.cross_attention_layers * self.norm_params()
        return bare._blocks_params(False) - router - cross_norms


# ----- representative shape for a bare parameter count ---------------------------------------
# A Llama-2-style dense decoder: head_dim 128, hidden/layers = 128 (Llama-2 7B/13B, Llama-3.1 405B
# sit at 128; 70B at 102), SwiGLU with f ~ 8/3 h, multi-head attention, 32,000-token vocab, untied.
# Hidden size is solved from the target size, layers rounded, then the MLP width is adjusted so
# the total lands within a fraction of a percent of the request. 6.74 B gives back Llama-2-7B.
REPRESENTATIVE_VOCAB = 32_000
REPRESENTATIVE_HEAD_DIM = 128
REPRESENTATIVE_HIDDEN_PER_LAYER = 128


def shape_for_params(params_b: float) -> ModelArch:
    """A representative dense decoder with about ``params_b`` billion parameters."""
    if not (0.01 <= params_b <= 5000):
        raise BadInput(f"--params-b {params_b} is outside 0.01-5000 (billions of parameters)")
    target = params_b * 1e9
    vocab = REPRESENTATIVE_VOCAB

    def total(h: float) -> float:  # 12 h^2 per block with f = 8/3 h; L = h / 128
        return 12 * h * h * (h / REPRESENTATIVE_HIDDEN_PER_LAYER) + 2 * vocab * h

    lo, hi = 16.0, 200_000.0
    for _ in range(100):  # bisection: total() is increasing in h
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < target else (lo, mid)
    head_dim = 64 if lo < 1024 else REPRESENTATIVE_HEAD_DIM  # small models use narrower heads
    hidden = max(head_dim, int(round(lo / head_dim)) * head_dim)
    heads = hidden // head_dim
    block_no_mlp = 4 * hidden * hidden + 2 * hidden
    layers = max(1, round((target - 2 * vocab * hidden) / (block_no_mlp + 8 * hidden * hidden)))
    mlp_budget = (target - 2 * vocab * hidden - hidden) / layers - block_no_mlp
    width = max(64, int(round(mlp_budget / (3 * hidden) / 64)) * 64)
    return ModelArch(
        name=f"dense-{params_b:g}b",
        model_type="llama",
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=head_dim,
        intermediate_size=width,
        vocab_size=vocab,
        tied_embeddings=False,
        gated_mlp=True,
        representative=True,
    )


# ----- catalog -------------------------------------------------------------------------------
class CatalogEntry(BaseModel):
    """One row of ``model_catalog.json``: the architecture plus provenance."""

    model_config = ConfigDict(frozen=True)

    arch: ModelArch
    aliases: tuple[str, ...] = ()
    published_params_b: float
    published_active_params_b: float | None = None
    source: str
    note: str | None = None


_PROVENANCE = ("aliases", "published_params_b", "published_active_params_b", "source", "note")


@functools.cache
def catalog() -> dict[str, CatalogEntry]:
    """Repo id -> entry, in file order."""
    raw = json.loads(CATALOG_PATH.read_text())
    entries: dict[str, CatalogEntry] = {}
    for row in raw["models"]:
        arch_fields = {k: v for k, v in row.items() if k not in _PROVENANCE and k != "id"}
        arch_fields.setdefault("head_dim", row["hidden_size"] // row["num_heads"])
        arch = ModelArch(name=row["id"], **arch_fields)
        entries[row["id"]] = CatalogEntry(arch=arch, **{k: row[k] for k in _PROVENANCE if k in row})
    return entries


def model_ids() -> list[str]:
    """Catalog keys (Hugging Face repo ids)."""
    return list(catalog())


_SUFFIXES = ("-hf", "-instruct", "-chat", "-it", "-base")
# Re-uploads of the same weights in another storage format (unsloth's "-bnb-4bit" repos, GPTQ/AWQ
# exports, FP8 checkpoints): the shape a fine-tune trains is the original's, so they match it.
_WEIGHT_FORMAT_SUFFIXES = (
    "-unsloth-bnb-4bit",
    "-bnb-4bit",
    "-bnb-8bit",
    "-4bit",
    "-8bit",
    "-gptq",
    "-awq",
    "-int4",
    "-int8",
    "-fp8",
    "-bf16",
    "-fp16",
)


def normalize_model_name(name: str) -> str:
    """Loose key for matching names as sources write them ("Llama-2-7b", "phi-1_5", "llama-3-8b")."""
    key = name.strip().lower().rsplit("/", 1)[-1].replace("_", ".")
    key = re.sub(r"\s+", "-", key)
    stripped = True
    while stripped:
        stripped = False
        for suffix in (*_WEIGHT_FORMAT_SUFFIXES, *_SUFFIXES):
            if key.endswith(suffix) and len(key) > len(suffix):
                key, stripped = key[: -len(suffix)], True
    return key


@functools.cache
def _alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for model_id, entry in catalog().items():
        for name in (model_id, *entry.aliases):
            index.setdefault(normalize_model_name(name), model_id)
    return index


def find_model(name: str) -> ModelArch | None:
    """Catalog lookup by exact repo id (any case), then by alias / normalized name."""
    entries = catalog()
    lowered = {k.lower(): k for k in entries}
    if name.strip().lower() in lowered:
        return entries[lowered[name.strip().lower()]].arch
    model_id = _alias_index().get(normalize_model_name(name))
    return entries[model_id].arch if model_id else None


# A parameter count given beside a catalog id or a config.json only confirms the model: within
# this share both name the same one (published totals round, and some leave out the embeddings).
SIZE_AGREEMENT = 0.15


def resolve_model(
    model_id: str | None = None,
    config_path: str | Path | None = None,
    params_b: float | None = None,
) -> ModelArch:
    """The architecture named by a catalog id, a config.json path or a size.

    The exact shape wins: a config.json, else the catalog's row for ``model_id``. A size given
    beside it must agree (:data:`SIZE_AGREEMENT`). A model the catalog does not hold, given with a
    size, gets the representative shape of that size under its own name (a measured-run table often
    carries both columns)."""
    if model_id is None and config_path is None and params_b is None:
        raise BadInput("give the model: --model ID (catalog), --config PATH (config.json) or --params-b N")
    if params_b is not None and not math.isfinite(params_b):
        raise BadInput(f"--params-b {params_b} is not a number")
    exact: ModelArch | None = None
    if config_path is not None:
        from gpuprice.models.hf_config import arch_from_config_file

        exact = arch_from_config_file(Path(config_path))
    elif model_id is not None:
        exact = find_model(model_id)
        if exact is None and params_b is None:
            raise unknown_choice("model", model_id, model_ids())
    if exact is None:
        assert params_b is not None
        stand_in = shape_for_params(params_b)
        if model_id is not None:
            stand_in = stand_in.model_copy(
                update={"name": f"{model_id} (not in the catalog: {stand_in.name})"}
            )
        return stand_in
    if params_b is not None and abs(exact.n_params / 1e9 - params_b) > SIZE_AGREEMENT * params_b:
        named = model_id if config_path is None else str(config_path)
        raise BadInput(
            f"--params-b {params_b:g} disagrees with {named} ({exact.n_params / 1e9:.2f}B parameters); "
            "give one of them"
        )
    return exact
