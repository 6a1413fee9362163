"""What Hugging Face ``config.json`` files call each quantity, and what each model family leaves
implicit (gating, norms, tied heads, biases, defaults of omitted fields): the tables the reader in
``models/hf_config.py`` looks a config up in, kept apart so the reader stays one rule.
"""

from __future__ import annotations

HIDDEN = ("hidden_size", "n_embd", "d_model", "dim", "model_dim")
LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
HEADS = ("num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads")
VOCAB = ("vocab_size", "padded_vocab_size", "n_vocab")
INTERMEDIATE = (
    "intermediate_size",
    "n_inner",
    "ffn_hidden_size",
    "d_ff",
    "ffn_dim",
    "ffn_hidden_dim",
    "ff_intermediate_size",
)

GATED_TYPES = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "qwen",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "gemma",
        "gemma2",
        "gemma3_text",
        "phi3",
        "chatglm",
        "glm",
        "glm4",
        "stablelm",
        "deepseek_v2",
        "deepseek_v3",
        "olmo",
        "olmo2",
        "internlm2",
        "baichuan",
        "yi",
        "cohere",
        "granite",
        "llama4",
        "llama4_text",
        "gpt_oss",
        "phimoe",
        "ministral",
        "vaultgemma",
        # DBRX's experts are GLUs (DbrxExpertGLU: w1, v1, w2); its config names no activation.
        "dbrx",
    }
)
UNGATED_TYPES = frozenset(
    {
        "falcon",
        "falcon_new",
        "gpt_bigcode",
        "gpt_neox",
        "bloom",
        "phi",
        "gpt2",
        "gptj",
        "opt",
        "starcoder2",
        "mpt",
        "gpt_neo",
        "codegen",
        "persimmon",
        # Nemotron-4 and Nemotron-H: squared-ReLU MLPs (up, down)
        "nemotron",
        "nemotron_h",
    }
)
# Where configs name the MLP's activation (Nemotron-H: mlp_hidden_act "relu2" beside mamba_hidden_act).
ACTIVATION_KEYS = ("mlp_hidden_act", "hidden_act", "activation_function", "hidden_activation")
# Activations of plain two-matrix MLPs (GPT-2, OPT, BLOOM, Nemotron's squared ReLU). Any other
# activation, or none stated, reads as a gated (SwiGLU/GeGLU) MLP, as in a Llama-style decoder:
# new MoE configs often state none (DeepSeek-V4's SGLang copy) or a variant name ("swigluoai").
UNGATED_ACTIVATIONS = frozenset(
    {"gelu", "gelu_new", "gelu_fast", "gelu_python", "gelu_accurate", "gelu_10", "quick_gelu", "relu",
     "relu2", "relu6", "squared_relu", "tanh", "sigmoid", "leaky_relu", "mish"}
)  # fmt: skip
LAYERNORM_TYPES = frozenset(
    {
        "falcon",
        "falcon_new",
        "gpt_bigcode",
        "gpt_neox",
        "bloom",
        "phi",
        "stablelm",
        "gpt2",
        "gptj",
        "opt",
        "starcoder2",
        "mpt",
        "gpt_neo",
        "codegen",
        "persimmon",
        "nemotron",
        "bert",
    }
)
# Families whose LM head shares the embedding matrix unless the config says otherwise (T5: the
# PretrainedConfig default tie_word_embeddings=True, which t5-base's config.json leaves implicit;
# T5 v1.1 / FLAN-T5 / mT5 configs set it to false).
TIED_BY_DEFAULT = frozenset(
    {
        "t5",
        "gemma",
        "gemma2",
        "gemma3_text",
        "falcon",
        "falcon_new",
        "gpt_bigcode",
        "bloom",
        "gpt2",
        "opt",
        "mpt",
        # CohereConfig / Cohere2Config default tie_word_embeddings=True; Aya-23's and
        # Command-R7B's config.json leave it implicit.
        "cohere",
        "cohere2",
        # GPTNeoConfig, SmolLM3Config and VaultGemmaConfig default tie_word_embeddings=True;
        # EleutherAI/gpt-neo-*, HuggingFaceTB/SmolLM3-3B and google/vaultgemma-1b leave it implicit.
        "gpt_neo",
        "smollm3",
        "vaultgemma",
        # Starcoder2Config and BertConfig keep PretrainedConfig's default tie_word_embeddings=True:
        # bigcode/starcoder2-7b's config.json leaves it implicit (7.17B published, untied would read
        # 7.40B); BERT's masked-LM decoder is the embedding matrix.
        "starcoder2",
        "bert",
        # MambaConfig / FalconMambaConfig default tie_word_embeddings=True (state-spaces/mamba-*).
        "mamba",
        "falcon_mamba",
    }
)
BIASED_TYPES = frozenset(
    {"gpt_bigcode", "gpt_neox", "bloom", "phi", "gpt2", "opt", "starcoder2", "mpt", "gpt_neo", "persimmon"}
)
QKV_BIAS_TYPES = frozenset({"qwen", "qwen2", "qwen2_moe"}) | BIASED_TYPES - {"gpt_neo"}
# Falcon-7B, GPT-J, CodeGen, Phi-1/2 and Cohere run attention and MLP in parallel off one norm.
PARALLEL_BLOCK_TYPES = frozenset({"phi", "gptj", "codegen", "cohere", "cohere2"})
# Families whose config default MLP activation is "gelu_new", transformers' Python tanh formula
# (GPT2Config ``activation_function``, GPTJConfig, CodeGenConfig, GPTNeoConfig, PhiConfig
# ``hidden_act``), where a config.json may leave it out.
GELU_NEW_BY_DEFAULT = frozenset({"gpt2", "gptj", "codegen", "gpt_neo", "phi"})


# Legacy / remote-code model types that share a family's layout.
FAMILY_ALIASES = {
    "t5": "t5",
    "mt5": "t5",
    "umt5": "t5",
    "phi-msft": "phi",
    "mixformer-sequential": "phi",
    "refinedweb": "falcon_new",
    "refinedwebmodel": "falcon",  # Falcon-40B / Falcon-7B remote code
    "stablelm_epoch": "stablelm",
    "stablelm-epoch": "stablelm",
    # Qwen2-VL / Qwen2.5-VL language models are Qwen2 decoders (q, k, v biases).
    "qwen2_vl": "qwen2",
    "qwen2_5_vl": "qwen2",
    "qwen2_vl_text": "qwen2",
    "qwen2_5_vl_text": "qwen2",
    "qwen2_5_omni_text": "qwen2",  # Qwen2.5-Omni thinker_config.text_config
}
FALCON = ("falcon", "falcon_new")

# Fields a family's config.json may leave out because transformers' config class defaults them:
# Gemma 3's published configs (e.g. google/gemma-3-27b-it text_config) omit vocab_size, and the
# 4B omits the head counts, relying on Gemma3TextConfig's defaults (configuration_gemma3.py:
# vocab_size=262_208, num_attention_heads=8, num_key_value_heads=4, head_dim=256).
FAMILY_DEFAULTS: dict[str, dict[str, int]] = {
    # Mamba-1 configs have no attention at all; one placeholder head that no block reads.
    "mamba": {"num_attention_heads": 1},
    "falcon_mamba": {"num_attention_heads": 1},
    "gemma3_text": {
        "vocab_size": 262_208,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
    },
}

# A multimodal wrapper builds its text_config with the text model's config class
# (transformers' LlavaConfig: ``CONFIG_MAPPING[text_config["model_type"]](**text_config)``), so a
# nested text_config may leave out every field that class defaults: llava-hf/llava-1.5-7b-hf's
# text_config is {"model_type": "llama", "vocab_size": 32064, ...} with no shape at all, read as
# LlamaConfig's defaults (configuration_llama.py: the Llama-2-7B shape). Only for nested configs:
# a top-level config without its shape still names the missing field.
NESTED_TEXT_DEFAULTS: dict[str, dict[str, int]] = {
    "llama": {
        "vocab_size": 32_000,
        "hidden_size": 4096,
        "intermediate_size": 11_008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
    },
}

# State-space layouts the reader turns into the hybrid fields (hf_config._ssm_fields).
SSM_LAYOUTS = frozenset(
    {"mamba", "falcon_mamba", "mamba2", "jamba", "bamba", "granitemoehybrid", "falcon_h1"}
)

# Layouts ModelArch cannot express: refused in one line rather than read as something else.
UNSUPPORTED_LAYOUTS = {
    "zamba2": (
        "Zamba2 reuses shared attention blocks (with per-layer LoRA) across its Mamba-2 stack, so "
        "its weights and its compute differ; this layout is not supported"
    ),
    "zamba": "Zamba reuses a shared attention block across its Mamba stack; this layout is not supported",
    "gemma3n": ("Gemma 3n (per-layer embeddings, AltUp, LAuReL, per-layer MLP widths) is not supported"),
    "gemma3n_text": ("Gemma 3n (per-layer embeddings, AltUp, LAuReL, per-layer MLP widths) is not supported"),
    "kimi_linear": (
        "Kimi Linear (KDA delta-rule linear attention beside MLA blocks) is not supported: its linear "
        "attention blocks are not read"
    ),
    # RWKV's time- and channel-mixing blocks have no attention heads or Llama-style MLP to read
    "rwkv": "RWKV (time- and channel-mixing blocks, no attention) is not supported",
    "rwkv5": "RWKV (time- and channel-mixing blocks, no attention) is not supported",
    "rwkv6": "RWKV (time- and channel-mixing blocks, no attention) is not supported",
    "rwkv7": "RWKV (time- and channel-mixing blocks, no attention) is not supported",
}
