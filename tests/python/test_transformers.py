"""attn_implementation="attnforge" in transformers models (docs/contract.md §6): Llama-, Qwen2- and Gemma-2-shaped
models with random weights, small, generating greedily with attnforge and with sdpa (eager for Gemma-2, whose
soft-cap sdpa refuses): the same tokens, logits within §5's bound, over dynamic and static caches, left-padded
batches, GQA without repeat_kv, Gemma-2's sliding window and soft-cap, float32 and bf16."""
import copy

import attnforge
import attnforge.transformers
import pytest
import torch
from references import recorded_torch_calls

transformers = pytest.importorskip("transformers")

attnforge.transformers.register()


def llama():
    return transformers.LlamaForCausalLM, transformers.LlamaConfig(
        vocab_size=256, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
        num_key_value_heads=2, head_dim=64, max_position_embeddings=512)


def qwen2():  # Qwen2.5-0.5B's heads: 14 query heads over 2
    return transformers.Qwen2ForCausalLM, transformers.Qwen2Config(
        vocab_size=256, hidden_size=896, intermediate_size=512, num_hidden_layers=2, num_attention_heads=14,
        num_key_value_heads=2, max_position_embeddings=512)


def gemma2():  # Gemma-2's head width, soft-cap and alternating sliding-window layers (a window shorter than the prompt)
    return transformers.Gemma2ForCausalLM, transformers.Gemma2Config(
        vocab_size=256, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=256, sliding_window=16, attn_logit_softcapping=50.0,
        final_logit_softcapping=30.0, query_pre_attn_scalar=256, max_position_embeddings=512)


MODELS = {"llama": llama, "qwen2": qwen2, "gemma2": gemma2}


def build(model, implementation, dtype):
    cls, config = MODELS[model]()
    config = copy.deepcopy(config)
    config._attn_implementation = implementation
    torch.manual_seed(0)
    return cls(config).eval().to(dtype)


def baseline(model):
    return "eager" if model == "gemma2" else "sdpa"  # sdpa refuses a soft-cap


def prompt(batch, length, padded):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 256, (batch, length), generator=g)
    mask = torch.ones_like(ids)
    if padded:
        mask[1:, :9] = 0  # left padding, as generate() batches prompts of different lengths
    return ids, mask


def logit_bound(ref, dtype):
    # §5 through a model: each layer's attention within its bound, the layers after it amplifying; the tolerance
    # of a float32 (bf16) model run with two attention implementations.
    return (2e-4 if dtype == torch.float32 else 6e-2) * (1 + ref.abs().max().item())


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_greedy_tokens_match_the_baseline(model, cache):
    ref, ours = build(model, baseline(model), torch.float32), build(model, "attnforge", torch.float32)
    ids, mask = prompt(2, 40, padded=True)
    options = dict(max_new_tokens=10, do_sample=False, attention_mask=mask, pad_token_id=0)
    if cache == "static":
        options["cache_implementation"] = "static"
    with torch.no_grad():
        expected, got = ref.generate(ids, **options), ours.generate(ids, **options)
    assert torch.equal(got, expected)


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("padded", [False, True])
def test_prompt_logits_within_the_bound(model, padded):
    ref, ours = build(model, baseline(model), torch.float32), build(model, "attnforge", torch.float32)
    ids, mask = prompt(2, 40, padded)
    with torch.no_grad():
        expected = ref(ids, attention_mask=mask).logits
        got = ours(ids, attention_mask=mask).logits
    keep = mask.bool()
    err = (got - expected)[keep].abs().max().item()
    assert err <= logit_bound(expected[keep], torch.float32), err


@pytest.mark.parametrize("model", ["llama", "gemma2"])
def test_bf16_models_run_bf16_kernels(model, monkeypatch):
    ref, ours = build(model, baseline(model), torch.bfloat16), build(model, "attnforge", torch.bfloat16)
    ids, mask = prompt(2, 24, padded=True)
    calls = recorded_torch_calls(monkeypatch)
    with torch.no_grad():
        expected = ref(ids, attention_mask=mask).logits.float()
        got = ours(ids, attention_mask=mask).logits
    assert got.dtype == torch.bfloat16 and calls and all(c["dtype"] == "bf16" for c in calls)
    keep = mask.bool()
    err = (got.float() - expected)[keep].abs().max().item()
    assert err <= logit_bound(expected[keep], torch.bfloat16), err


def test_static_cache_decoding_reads_only_the_written_slots(monkeypatch):
    # A static cache of 256 slots: each decoding step's kernel gets the keys written so far, not all 256.
    model = build("llama", "attnforge", torch.float32)
    ids, mask = prompt(2, 30, padded=True)
    calls = recorded_torch_calls(monkeypatch)
    cache = transformers.StaticCache(config=model.config, max_cache_len=256)
    with torch.no_grad():
        model.generate(ids, attention_mask=mask, max_new_tokens=5, do_sample=False, pad_token_id=0,
                       past_key_values=cache)
    steps = [(c["variant"], c["shapes"]["q"][2], c["shapes"]["k"][2]) for c in calls if c["shapes"]["q"][2] == 1]
    assert steps and all(variant == "decode_masked" for variant, _, _ in steps)
    # Two layers per step; the step after a prompt of 30 reads 31 keys, the last of 4 steps 34.
    assert [lk for _, _, lk in steps] == [31, 31, 32, 32, 33, 33, 34, 34]


def test_training_mode_dropout_and_attention_weights_are_refused():
    model = build("llama", "attnforge", torch.float32)
    for layer in model.model.layers:
        layer.self_attn.attention_dropout = 0.1
    model.train()
    ids, _ = prompt(1, 8, padded=False)
    with torch.no_grad(), pytest.raises(ValueError, match="dropout"):
        model(ids)
    model.eval()
    with torch.no_grad(), pytest.raises(ValueError, match="output_attentions"):
        model(ids, output_attentions=True)
