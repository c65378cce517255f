"""attnforge.transformers.QuantizedStaticCache (docs/pytorch.md): a transformers KV cache of 8-bit codes read in place
by decode_u8 / decode_i8 / decode_i8_g32 / decode_u8_kc128. A layer's attention against float64 attention over its dequantized codes;
whole models generating over it against sdpa over a cache holding the same dequantized values (the same tokens,
logits within the bound: the kernels are checked, not the quantization); which kernels read what; the refusals."""
import copy
import math

import pytest
import torch
from references import dequantized

transformers = pytest.importorskip("transformers")
import attnforge  # noqa: E402
import attnforge.quantized_cache as quantized_cache  # noqa: E402
import attnforge.transformers  # noqa: E402
from test_transformers import MODELS, logit_bound, prompt  # noqa: E402

attnforge.transformers.register()

STORAGES = list(quantized_cache.STORAGES)


def build(model, implementation, dtype=torch.float32):
    cls, config = MODELS[model]()
    config = copy.deepcopy(config)
    config._attn_implementation = implementation
    torch.manual_seed(0)
    return cls(config).eval().to(dtype)


def layer_tensors(layer, name):
    """A layer's codes and scales under decode_u8's input names (k, k_scale, k_zero), its written slots."""
    L = layer.cumulative_length
    buffers = {"": getattr(layer, f"{name}s"), "_scale": getattr(layer, f"{name}_scale"),
               "_zero": getattr(layer, f"{name}_zero")}
    return {f"{name[0]}{suffix}": b[:, :, :L] for suffix, b in buffers.items() if b is not None}


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("Lq", [1, 3])
def test_a_layer_attends_over_its_codes_as_float64_attention_over_their_values(storage, dtype, Lq):
    g = torch.Generator().manual_seed(2)
    B, Hq, Hkv, E, prompt_length = 2, 6, 2, 64, 37
    layer = quantized_cache.QuantizedStaticLayer(max_cache_len=64, storage=storage)
    k, v = (torch.randn(B, Hkv, prompt_length, E, generator=g).to(dtype) for _ in range(2))
    assert layer.update(k, v)[0] is k  # the prompt attends over its keys as computed
    k_new, v_new = (torch.randn(B, Hkv, Lq, E, generator=g).to(dtype) for _ in range(2))
    keys, _ = layer.update(k_new, v_new)
    assert keys.dtype in (torch.uint8, torch.int8) and layer.get_seq_length() == prompt_length + Lq
    q = torch.randn(B, Hq, Lq, E, generator=g).to(dtype) * 3
    got = layer.attend(q, None, 0.2, None, None)  # (B, Lq, Hq, E)
    assert got.shape == (B, Lq, Hq, E) and got.dtype == dtype
    keys64 = dequantized(layer_tensors(layer, "key"), "k").repeat_interleave(Hq // Hkv, dim=1)
    values64 = dequantized(layer_tensors(layer, "value"), "v").repeat_interleave(Hq // Hkv, dim=1)
    Lk = prompt_length + Lq
    allowed = torch.ones(Lq, Lk, dtype=torch.bool).tril(Lk - Lq)
    scores = (q.double() @ keys64.transpose(-1, -2) * 0.2).masked_fill(~allowed, -math.inf)
    expected = (scores.softmax(-1) @ values64).transpose(1, 2)
    err = (got.double() - expected).abs().max().item()
    top = 1 + expected.abs().max().item()
    assert err <= (1e-4 if dtype == torch.float32 else 5e-3) * top, err


class DequantizedCache(transformers.DynamicCache):
    """The reference: a dynamic cache whose update quantizes the new tokens by the same rule (into a
    QuantizedStaticLayer of its own) and hands sdpa the dequantized values of every cached token, except for the prompt,
    which attends over its values as computed: what QuantizedStaticCache stands for, computed another way."""

    def __init__(self, config, max_cache_len, storage):
        super().__init__(config=config)
        self.shadow = [quantized_cache.QuantizedStaticLayer(max_cache_len, storage)
                       for _ in range(config.num_hidden_layers)]

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        shadow = self.shadow[layer_idx]
        prompt = shadow.get_seq_length() == 0
        shadow.update(key_states, value_states)
        new = key_states.shape[-2]
        keys = dequantized(layer_tensors(shadow, "key"), "k").to(key_states.dtype)
        values = dequantized(layer_tensors(shadow, "value"), "v").to(value_states.dtype)
        # The parent holds the new tokens' dequantized values only: its lengths (and masks) are the cache's.
        super().update(keys[:, :, -new:], values[:, :, -new:], layer_idx, *args, **kwargs)
        return (key_states, value_states) if prompt else (keys, values)


@pytest.mark.parametrize("model, storage", [("llama", s) for s in STORAGES] + [("qwen2", "u8"), ("qwen2", "i8")])
def test_models_generate_as_sdpa_over_the_dequantized_cache(model, storage):
    ref, ours = build(model, "sdpa"), build(model, "attnforge")
    ids, _ = prompt(2, 30, padded=False)
    options = dict(max_new_tokens=8, do_sample=False, pad_token_id=0, output_logits=True,
                   return_dict_in_generate=True)
    with torch.no_grad():
        expected = ref.generate(ids, cache=DequantizedCache(ref.config, 64, storage), **options)
        got = ours.generate(ids, cache=attnforge.transformers.QuantizedStaticCache(ours.config, 64, storage), **options)
    assert torch.equal(got.sequences, expected.sequences)
    for step, (a, b) in enumerate(zip(got.logits, expected.logits)):
        err = (a - b).abs().max().item()
        assert err <= logit_bound(b, torch.float32), (step, err)


def test_chunks_over_the_cache_and_a_reset_cache_compute_as_the_reference():
    # A prompt in two chunks (the second, 7 tokens, attends over the codes with the model's own causal mask), a step,
    # then the same after reset(): every logit as sdpa's over the dequantized cache.
    ref, ours = build("llama", "sdpa"), build("llama", "attnforge")
    ids, _ = prompt(2, 30, padded=False)
    expected_cache = DequantizedCache(ref.config, 64, "u8")
    cache = attnforge.transformers.QuantizedStaticCache(ours.config, 64, "u8")

    def forward(model, c, chunk, start):
        return model(chunk, cache=c, cache_position=torch.arange(start, start + chunk.shape[1])).logits

    with torch.no_grad():
        expected = [forward(ref, expected_cache, ids[:, :23], 0), forward(ref, expected_cache, ids[:, 23:], 23),
                    forward(ref, expected_cache, ids[:, :1], 30)]
        for _ in range(2):
            got = [forward(ours, cache, ids[:, :23], 0), forward(ours, cache, ids[:, 23:], 23),
                   forward(ours, cache, ids[:, :1], 30)]
            for a, b in zip(got, expected):
                assert (a - b).abs().max().item() <= logit_bound(b, torch.float32)
            assert cache.get_seq_length() == 31
            cache.reset()


def test_a_bf16_model_decodes_on_bf16_kernels_over_the_codes(monkeypatch):
    ran = []

    class Recording:
        def __getattr__(self, name):
            return getattr(attnforge._native, name)

        def run(self, variant, **inputs):
            ran.append((variant, inputs["q"].dtype, inputs["k"].dtype, tuple(inputs["k"].shape)))
            return attnforge._native.run(variant, **inputs)

    monkeypatch.setattr(quantized_cache, "_native", Recording())
    model = build("llama", "attnforge", torch.bfloat16)
    ids, _ = prompt(1, 20, padded=False)
    cache = attnforge.transformers.QuantizedStaticCache(model.config, max_cache_len=256)
    with torch.no_grad():
        out = model.generate(ids, cache=cache, max_new_tokens=4, do_sample=False, pad_token_id=0)
    assert out.shape == (1, 24)
    # Three steps after the prompt, two layers each: decode_u8 on bf16 queries over the written slots only.
    assert [(v, lk) for v, _, _, (_, _, lk, _) in ran] == [("decode_u8", n) for n in (21, 21, 22, 22, 23, 23)]
    assert all(q == torch.bfloat16 and k == torch.uint8 for _, q, k, _ in ran)
    layer = cache.layers[0]
    assert layer.keys.dtype == torch.uint8 and layer.keys.shape == (1, 2, 256, 64)
    assert int(layer.kv_length[0]) == 23 and layer.key_scale[0, 0, :23].gt(0).all()


def test_what_the_cache_cannot_serve_is_refused():
    model = build("llama", "attnforge")
    ids, mask = prompt(2, 30, padded=True)
    cache = attnforge.transformers.QuantizedStaticCache(model.config, 64)
    with torch.no_grad(), pytest.raises(ValueError, match="without padding"):
        model.generate(ids, attention_mask=mask, max_new_tokens=2, do_sample=False, pad_token_id=0, cache=cache)
    # Refused at the first layer: the cache is left empty, not with one layer's tokens, and serves the next call.
    assert cache.get_seq_length() == 0 and all(layer.get_seq_length() == 0 for layer in cache.layers)
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=2, min_new_tokens=2, do_sample=False, pad_token_id=0, cache=cache)
    assert out.shape == (2, 32) and cache.get_seq_length() == 31
    with torch.no_grad(), pytest.raises(ValueError, match="float32 or bfloat16"):
        build("llama", "attnforge", torch.float16).generate(
            ids, max_new_tokens=2, do_sample=False, pad_token_id=0,
            cache=attnforge.transformers.QuantizedStaticCache(model.config, 64))
    with torch.no_grad(), pytest.raises(ValueError, match="exceed max_cache_len = 32"):
        model.generate(ids[:, :30], max_new_tokens=4, do_sample=False, pad_token_id=0,
                       cache=attnforge.transformers.QuantizedStaticCache(model.config, 32))
    with pytest.raises(ValueError, match="storage 'u4'"):
        attnforge.transformers.QuantizedStaticCache(model.config, 64, storage="u4")
    gemma = build("gemma2", "attnforge")
    with pytest.raises(ValueError, match="sliding_attention"):
        attnforge.transformers.QuantizedStaticCache(gemma.config, 64)
    layer = quantized_cache.QuantizedStaticLayer(8, "i8_g32")
    with pytest.raises(ValueError, match="E = 48 is not a multiple of 32"):
        layer.update(torch.zeros(1, 1, 2, 48), torch.zeros(1, 1, 2, 48))


def test_keys_by_channel_quantize_the_open_block_again_and_crop_within_the_last_block():
    # u8_kc128: a prompt of 130 tokens (a whole block of 128 and two), then single tokens: the keys' codes and scales
    # are those of one write of every token so far (the open block quantized again from its kept values); a crop
    # within the last block and tokens written again equal writing those tokens in the first place; a crop into an
    # earlier block is refused (its values are not kept).
    g = torch.Generator().manual_seed(4)
    B, Hkv, E = 1, 2, 64
    keys = torch.randn(B, Hkv, 140, E, generator=g)
    values = torch.randn(B, Hkv, 140, E, generator=g)

    def written(steps):
        layer = quantized_cache.QuantizedStaticLayer(max_cache_len=300, storage="u8_kc128")
        done = 0
        for n in steps:
            layer.update(keys[:, :, done:done + n], values[:, :, done:done + n])
            done += n
        return layer

    stepped, at_once = written([130] + [1] * 10), written([140])
    for name in ("keys", "key_scale", "key_zero", "values", "value_scale", "value_zero"):
        assert torch.equal(getattr(stepped, name)[:, :, :140], getattr(at_once, name)[:, :, :140]), name
    assert stepped.key_scale.shape == (B, Hkv, 3, E)
    stepped.crop(-5)
    assert stepped.get_seq_length() == 135
    stepped.update(keys[:, :, 135:140], values[:, :, 135:140])
    assert torch.equal(stepped.keys[:, :, :140], at_once.keys[:, :, :140])
    assert torch.equal(stepped.key_scale[:, :, 1], at_once.key_scale[:, :, 1])
    with pytest.raises(ValueError, match="can crop only within the block of 128 tokens the last update wrote"):
        stepped.crop(-13)
    assert stepped.get_seq_length() == 140
    # Two crops: to a block's start (allowed), then into the block before it, whose values were not kept: refused,
    # though the length left is within the new last block.
    stepped.crop(-12)
    assert stepped.get_seq_length() == 128
    with pytest.raises(ValueError, match=r"to 128 tokens or more\); asked to remove 28 of 128"):
        stepped.crop(-28)
    stepped.crop(-128)  # to no tokens at all: nothing is read again
    assert stepped.get_seq_length() == 0
