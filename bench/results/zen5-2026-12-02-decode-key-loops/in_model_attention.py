# The attention call of Llama-3-8B (2 layers, MLP width argv[2]) per decode step after a prompt of argv[1] tokens
# prefilled with sdpa, cache argv[3] (static or dynamic), one thread; AFPY: the attnforge module to import.
#     .venv/bin/python in_model_attention.py 512 14336 static
import sys, os, time, statistics
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("AFPY", os.path.join(HERE, "..", "..", "..", "build", "python")))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "python"))
import torch, transformers, attnforge, attnforge.transformers
from transformers_generate import build, model_configs
torch.set_num_threads(1); attnforge.set_default_threads(1)
attnforge.transformers.register()
rec, kernel = [], []  # the attention call's seconds, its kernel's (timed by the extension)
orig = attnforge.transformers.attention_forward
def timed(*a, **k):
    t0 = time.perf_counter(); r = orig(*a, **k); rec.append(time.perf_counter() - t0)
    kernel.append(attnforge._native._last_torch_call()["kernel_seconds"]); return r
transformers.AttentionInterface.register("attnforge", timed)
name, cls, cfg = [m for m in model_configs(2, 4096, mlp=int(sys.argv[2])) if m[0] == "Llama-3-8B"][0]
model = build(cls, cfg, "sdpa", torch.float32)
P = int(sys.argv[1])
ids = torch.randint(0, 4096, (1, P))
cache = transformers.StaticCache(config=model.config, max_cache_len=P + 40) if sys.argv[3] == "static" else transformers.DynamicCache(config=model.config)
with torch.no_grad():
    out = model(ids, past_key_values=cache, use_cache=True, cache_position=torch.arange(P))
    model.set_attn_implementation("attnforge")
    tok = out.logits[:, -1].argmax(-1, keepdim=True)
    for s in range(30):
        out = model(tok, past_key_values=cache, use_cache=True, cache_position=torch.tensor([P + s]), attention_mask=torch.ones(1, P + s + 1, dtype=torch.long))
        tok = out.logits[:, -1].argmax(-1, keepdim=True)
print(sys.argv[1:], os.environ.get("AFPY", "main"), "attention call us median", round(statistics.median(rec[10:]) * 1e6, 1),
      "kernel us median", round(statistics.median(kernel[10:]) * 1e6, 1), "calls", len(rec))
