"""Inputs of any variant at chosen sizes, made from attnforge.signature(): float tensors uniform in ±1
(weights of D = 512 variants scaled by 1/√512, LayerNorm gamma near 1), masks with some fully masked rows,
and index inputs that mean something (cache lengths from 0 to the cache's size, sorted document ids,
prefix lengths); a quantized cache as attnforge.quantize_into_cache writes it."""
import attnforge
import torch

# Sizes not multiples of the vector width or the tiles (contract §5); per variant where its structure
# needs more (a sliding window of 128 keys, relative positions clipped at ±128).
# Hkv = 1: the variants with a run-time Hkv run as MQA against torch (enable_gqa).
DEFAULT_SIZES = {"B": 2, "H": 3, "Hkv": 1, "E": 64, "Lq": 7, "Lkv": 45, "Lx": 19, "Lmemory": 11, "Ltokens": 33}
VARIANT_SIZES = {
    "sliding_window_attention": {"Lq": 150, "Lkv": 150},
    "relative_position_attention": {"Lq": 9, "Lkv": 300},
    "sdpa_causal": {"E": 96}, "decode": {"Lq": 4, "E": 128}, "decode_gqa": {"Lq": 1, "Lkv": 150},
    "decode_sliding_window": {"Lq": 4, "Lkv": 200}, "decode_rope": {"Lq": 4},
    "decode_softcap": {"Lq": 4, "Lkv": 200, "E": 256},
    "softcap_sliding_window_attention": {"E": 256, "Lq": 40, "Lkv": 40},
    "sdpa_masked": {"H": 4, "Hkv": 2}, "sdpa_causal_masked": {"E": 128, "Lkv": 150}, "decode_masked": {"Lq": 4},
    "softcap_masked": {"E": 256, "H": 4, "Hkv": 2}, "decode_softcap_masked": {"E": 256, "Lq": 4},
    "decode_u8": {"Lq": 4, "E": 128, "H": 4, "Hkv": 2},
    "decode_i8": {"Lq": 4, "E": 96, "H": 4, "Hkv": 2}, "decode_i8_g32": {"Lq": 1, "E": 128, "H": 6, "Hkv": 2},
    "decode_u8_kc128": {"Lq": 4, "E": 64, "H": 4, "Hkv": 2, "Lkv": 300},  # two whole blocks of 128 and a partial one
}


def sizes_of(variant):
    wanted = dict(DEFAULT_SIZES, **VARIANT_SIZES.get(variant, {}))
    return {name: wanted[name] for name in attnforge.signature(variant)["sizes"]}


def shape_of(symbols, sizes):
    return tuple(sizes[s] if isinstance(s, str) else s for s in symbols)


def make_inputs(variant, generator, sizes=None):
    sizes = sizes or sizes_of(variant)
    sig = attnforge.signature(variant)
    out = {}
    for name, spec in sig["inputs"].items():
        if spec.get("optional"):  # a scale: left to its default, 1/√E (test_module tests it given)
            continue
        if name in out:  # a quantized cache's scale or zero point, made with its codes (below)
            continue
        shape = shape_of(spec["shape"], sizes)
        if name == "attn_mask" and spec.get("broadcast"):  # PyTorch's attn_mask: one for every batch entry
            shape = (1,) + shape[1:]
        if name == "attn_mask" and spec["dtype"] != "bool":  # additive: −inf removes a pair; a fully removed row
            bias = torch.rand(shape, generator=generator, dtype=torch.float64) * 4 - 2
            bias[torch.rand(shape, generator=generator) < 0.3] = -torch.inf
            bias[0, -1, 1, :] = -torch.inf
            out[name] = bias.to(torch.float32)
            continue
        if spec["dtype"] == "uint8":  # a quantized cache (decode_u8): values in ±1 written by quantize_into_cache
            b, h, lmax, e = shape
            codes = torch.empty(shape, dtype=torch.uint8)
            values = (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1).to(torch.float32)
            blocks = sig["inputs"][f"{name}_scale"]["shape"][2]  # "Lkv" by token, "Lkv/128" by channel of blocks
            if "/" in str(blocks):
                token_block = int(blocks.split("/")[1])
                scale, zero = (torch.empty((b, h, -(-lmax // token_block), e)) for _ in range(2))
                attnforge.quantize_into_cache(values, torch.zeros(b, dtype=torch.int32), codes, scale, zero,
                                              open_block=torch.empty((b, h, token_block, e)))
            else:
                scale, zero = torch.empty((b, h, lmax)), torch.empty((b, h, lmax))
                attnforge.quantize_into_cache(values, torch.zeros(b, dtype=torch.int32), codes, scale, zero)
            out.update({name: codes, f"{name}_scale": scale, f"{name}_zero": zero})
            continue
        if spec["dtype"] == "int8":  # a symmetric cache (decode_i8, decode_i8_g32): a scale per token or per group
            b, h, lmax, e = shape
            groups = sig["inputs"][f"{name}_scale"]["shape"][3:]  # () per token, ("E/32",) per 32 channels
            scale_shape = (b, h, lmax) + tuple(e // int(g.split("/")[1]) for g in groups)
            codes, scale = torch.empty(shape, dtype=torch.int8), torch.empty(scale_shape)
            values = (torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1).to(torch.float32)
            attnforge.quantize_into_cache(values, torch.zeros(b, dtype=torch.int32), codes, scale)
            out.update({name: codes, f"{name}_scale": scale})
            continue
        if spec["dtype"] == "bool":
            keep = torch.rand(shape, generator=generator) < 0.7
            if name.endswith("padding_mask"):  # True = padded: pad a tail, one entry wholly
                lengths = [shape[1], 0] + [shape[1] // 2] * (shape[0] - 2)
                keep = torch.arange(shape[1])[None, :] >= torch.tensor(lengths[: shape[0]])[:, None]
            elif name == "attn_mask":
                keep[0, 1, :] = False  # a fully masked query row
            out[name] = keep
        elif spec["dtype"] == "int32" and name == "window":  # a window a variant requires (others' are optional)
            out[name] = torch.tensor(5, dtype=torch.int32)
        elif spec["dtype"] == "int32":
            b = shape[0]
            if name == "kv_length":
                lmax = sizes["Lkv"]
                out[name] = torch.tensor(([lmax, 0, 2] + [lmax // 3] * b)[:b], dtype=torch.int32)
            elif name == "prefix_length":
                out[name] = torch.tensor(([3, 0] + [5] * b)[:b], dtype=torch.int32)
            elif name == "document_ids":
                cuts = torch.sort(torch.randint(0, 4, shape, generator=generator), dim=-1).values
                out[name] = cuts.to(torch.int32)
            else:
                raise KeyError(f"no inputs for index input '{name}' of {variant}")
        else:
            x = torch.rand(shape, generator=generator, dtype=torch.float64) * 2 - 1
            if len(shape) == 2 and shape[0] == 512:
                x = x / 512 ** 0.5 * 2
            if name in ("gamma", "ln1_gamma", "ln2_gamma"):
                x = 1 + x / 8
            out[name] = x.to(torch.float32)
    return out
