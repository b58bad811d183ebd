"""Tutorial 06 forward (Z4 H32 N_CTX 4096 D64, BLOCK 128x64, 8 warps) on tilejit's CUDA
backend, timed in one process for the variants of cuda/mma_rows.py and cuda/rows_ring.py
(K's and V's tiles staged together at the top of the body or each before its dot; K's
transposed block loaded K-major in vectors, or as strided 2-byte loads; both B tiles
copied by cp.async into a ring), non-causal and causal, each checked against torch's
float32 SDPA (each variant under its own ``CudaTuning``: the switches are part of the
compile key).  Usage: PYTHONPATH=$PWD python bench/attn_rows_variants.py [VARIANT ...]
(default: kmajor ring; variants: neither kmajor ring "ring maxnreg128" ring+rotate "ring+rotate stages4"
wgmma (as shipped) "wgmma in order" "wgmma stages4" "wgmma maxnreg128" "wgmma in order maxnreg128"
"no index tiles" "wgmma no fp fusion" "wgmma no ftz" "wgmma strict" (strict: neither fp option)
"wgmma last waited" (CudaTuning.wgmma_inflight off) "wgmma no proxy fence" (proxy_fence off)
"wgmma leaves via smem" (ring_remat_leaves off) "wgmma offsets unsplit" (ring_split_offsets off);
or triton alone: real Triton in this process).  Every variant has
``index_tiles`` on (as shipped) but "no index tiles"."""
import os
import statistics
import sys
from dataclasses import replace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    import torch
    chosen = sys.argv[1:] or ["kmajor", "ring"]
    if chosen != ["triton"]:        # "triton" alone: the same script under real Triton
        from tilejit.compat import install_triton_alias
        install_triton_alias()
    from bench_tutorials_cuda import kernels
    from tilejit.runtime.options import get_options, use_options
    K = kernels("fused_attention")
    Z, H, N, D, BM, BN = 4, 32, 4096, 64, 128, 64
    torch.manual_seed(0)
    q, k, v = (torch.empty((Z, H, N, D), device="cuda", dtype=torch.float16).normal_(0.0, 0.5) for _ in range(3))
    o = torch.empty_like(q)
    m = torch.empty((Z, H, N), device="cuda", dtype=torch.float32)
    rows = []
    # name: (kmajor_b, row_ring, ring_rotate_first, extra launch options[, ring_wgmma[, index_tiles[,
    #        other CudaTuning fields]]])
    variants = {"neither": (False, False, False, {}), "kmajor": (True, False, False, {}),
                "ring": (True, True, False, {}), "ring maxnreg128": (True, True, False, {"maxnreg": 128}),
                "ring+rotate": (True, True, True, {}),
                "ring+rotate stages4": (True, True, True, {"num_stages": 4}),
                "wgmma": (True, True, True, {}, True),
                "wgmma in order": (True, True, False, {}, True),
                "wgmma stages4": (True, True, True, {"num_stages": 4}, True),
                "wgmma maxnreg128": (True, True, True, {"maxnreg": 128}, True),
                "wgmma in order maxnreg128": (True, True, False, {"maxnreg": 128}, True),
                "no index tiles": (True, True, True, {}, True, False),
                # Triton's fp options (both on by default, as shipped; docs/differences.md)
                "wgmma no fp fusion": (True, True, True, {"enable_fp_fusion": False}, True),
                "wgmma no ftz": (True, True, True, {"enable_reflect_ftz": False}, True),
                "wgmma strict": (True, True, True, {"enable_fp_fusion": False, "enable_reflect_ftz": False}, True),
                # the last dot's wgmma group waited for in its iteration (as before the attn branch)
                "wgmma last waited": (True, True, True, {}, True, True, {"wgmma_inflight": False}),
                # no fence.proxy.async after the copies' wait (Triton issues none)
                "wgmma no proxy fence": (True, True, True, {}, True, True, {"proxy_fence": False}),
                # the ring copies' invariant index leaves through shared memory (as before the attn branch)
                "wgmma leaves via smem": (True, True, True, {}, True, True, {"ring_remat_leaves": False}),
                # each copy address as base + (off + i) * stride per iteration (before the attn branch)
                "wgmma offsets unsplit": (True, True, True, {}, True, True, {"ring_split_offsets": False}),
                "triton": (True, False, False, {})}
    for name in chosen:
        spec = variants[name]          # (not ``v``: that is the V tensor)
        km, ring, rot, extra, wg, idx, more = spec + (False, True, {})[len(spec) - 4:]   # defaults: mma.sync, index tiles
        tuning = replace(get_options().cuda, kmajor_b=km, row_ring=ring, ring_rotate_first=rot, ring_wgmma=wg,
                         index_tiles=idx, **more)
        extra = {"num_stages": 3, **extra}
        rotate = name
        with use_options(cuda=tuning):
            for causal in (False, True):
                def run():
                    return K._attn_fwd[(N // BM, Z * H, 1)](q, k, v, 0.5, m, o, *q.stride(), *k.stride(),
                                                            *v.stride(), *o.stride(), Z, H, N_CTX=N, HEAD_DIM=D,
                                                            BLOCK_M=BM, BLOCK_N=BN, STAGE=3 if causal else 1,
                                                            num_warps=8, **extra)
                o.fill_(float("nan"))
                compiled = run()
                torch.cuda.synchronize()
                _dump(compiled, name, causal)
                ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                       is_causal=causal, scale=0.5)
                err = (o.float() - ref).abs().max().item()
                for _ in range(3):
                    run()
                ts = []
                for _ in range(15):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    run()
                    b.record()
                    b.synchronize()
                    ts.append(a.elapsed_time(b))
                ms = statistics.median(ts)
                flops = 4 * Z * H * N * N * D * (0.5 if causal else 1)
                rows.append((rotate, causal, ms, flops / ms / 1e9, err))
                print(f"{rotate} causal={causal}: {ms:.3f} ms {flops / ms / 1e9:.0f} TFLOP/s "
                      f"max err {err:.2e}", flush=True)
    print("| variant | causal | ms | TFLOP/s | max abs err vs torch fp32 |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.0f} | {r[4]:.2e} |")
    assert all(r[4] < 1e-2 for r in rows), "wrong results"


def _dump(compiled, name, causal):
    """With ATTN_PTX_DIR set: the launch's PTX there, and its register count printed."""
    out = os.environ.get("ATTN_PTX_DIR")
    asm = getattr(compiled, "asm", None) or {}
    if not out or "ptx" not in asm:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name.replace(' ', '_')}_{'causal' if causal else 'full'}.ptx"), "w") as f:
        f.write(asm["ptx"])
    print(name, "causal" if causal else "full", "registers:", getattr(compiled, "n_regs", "?"),
          "shared:", getattr(getattr(compiled, "metadata", None), "shared", "?"), flush=True)


if __name__ == "__main__":
    main()
