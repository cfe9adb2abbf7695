"""q15b/q16 (issue 37): one INT8 fake-quant layer call -- the general path, the lean call (modes.LEAN_CALL) with
the float32 F.linear on codes, and with the int8 GEMM (int_gemm, q16) -- in one process.

The INT8 layers of the net's default INT8 variant (as opkit quant's base builds it) are run once through the
engine under amct-fake-quant to catch each layer's real input (one batch of 64); then each layer's ``run`` is timed
with LEAN_CALL off, on with int_gemm.ENABLED off, and both on, interleaved (``--rounds`` rounds of ``--calls``
calls a side), the fastest round counting, process CPU, one torch thread; beside it ``F.linear`` / the float
module on the same input (the float layer's own cost). The three sides' outputs, labels and kernel names must be
equal bit for bit (the script fails otherwise).

    python benchmarks/bench_quant_int8_call.py [--model encoder|zoo:NAME] [--rounds 7] [--calls 300]
"""
from __future__ import annotations

import argparse
import sys
import time

from _bench import ROOT, banner, load

import torch

sys.path.insert(0, str(ROOT / "tests"))


class _Sim:                    # what QuantLayer.run reads of the engine under a fake-quant policy
    policy = None
    notes: list = []


def _net(name: str):
    if name == "encoder":
        from quantdata import encoder as E
        return E.encoder().float().eval(), E.patches(16, 2).float(), E.patches(64, 1).float()
    if name.startswith("zoo:"):
        from opkit.quant.amct import zoo
        return zoo.load(name[4:]), zoo.calib_set(16), zoo.test_set(64)[0]
    raise SystemExit(f"--model {name}: encoder or zoo:NAME")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="encoder")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=300)
    a = ap.parse_args()
    torch.set_num_threads(1)
    from opkit.evaluate import SimVariant
    from opkit.quant import int_gemm
    from opkit.quant import modes as M
    from opkit.quant.calibrate import calibrate
    from opkit.quant.config import default_config
    from opkit.quant.graph import read_graph
    from opkit.quant.variant import build_variant
    model, calib, x = _net(a.model)
    cfg = default_config(model)
    graph = read_graph(model, (calib[:2],))
    v = build_variant(model, cfg, calibrate(model, calib, cfg, graph), graph)
    caught = {}
    real = M.QuantLayer.run

    def run(self, sim, module, forward, args, kwargs):
        caught.setdefault(self.name, (self, module, forward, args[0].clone()))
        return real(self, sim, module, forward, args, kwargs)

    M.QuantLayer.run = run
    SimVariant("int8", policy="amct-fake-quant", layers=v.layers).simulator().run(model, (x,), record=False)
    M.QuantLayer.run = real
    banner(f"q15b/q16: one INT8 fake-quant layer call, general path vs lean call (F.linear / int8 GEMM), "
           f"{a.model}, batch 64, "
           f"process CPU, fastest of {a.rounds} rounds x {a.calls} calls, 1 torch thread")
    sim = _Sim()

    def timed(fn) -> float:
        t = time.process_time()
        for _ in range(a.calls):
            fn()
        return (time.process_time() - t) / a.calls

    print(f"   int8 GEMM (q16): {int_gemm.why() or 'used'}")
    print(f"   {'layer':<22} {'input':<16} {'float':>8} {'general':>8} {'lean':>8} {'lean i8':>8} {'saved':>7}"
          "  (us a call; lean: F.linear on float32 codes, lean i8: int8 GEMM)")
    tot = [0.0, 0.0, 0.0, 0.0]
    for name, (layer, module, forward, xin) in caught.items():
        args = (xin,)
        outs = []
        sides = ((False, False), (True, False), (True, True))      # (LEAN_CALL, int_gemm.ENABLED)
        for lean, i8 in sides:
            M.LEAN_CALL, int_gemm.ENABLED = lean, i8
            outs.append(layer.run(sim, module, forward, args, {}))
        (y0, *m0) = outs[0]
        for y1, *m1 in outs[1:]:
            if m0 != m1 or not torch.equal(y0.contiguous().view(torch.int32), y1.contiguous().view(torch.int32)):
                raise SystemExit(f"{name}: the lean call differs from the general path")
        best = [float("inf")] * 4
        with torch.no_grad():
            for _ in range(a.rounds):
                best[0] = min(best[0], timed(lambda: forward(xin)))
                for i, (lean, i8) in enumerate(sides, 1):
                    M.LEAN_CALL, int_gemm.ENABLED = lean, i8
                    best[i] = min(best[i], timed(lambda: layer.run(sim, module, forward, args, {})))
        M.LEAN_CALL, int_gemm.ENABLED = True, True
        tot = [t + b for t, b in zip(tot, best)]
        print(f"   {name:<22} {str(tuple(xin.shape)):<16} {best[0] * 1e6:8.1f} {best[1] * 1e6:8.1f} "
              f"{best[2] * 1e6:8.1f} {best[3] * 1e6:8.1f} {(best[1] - best[3]) * 1e6:7.1f}")
    print(f"   {'all ' + str(len(caught)) + ' layers':<39} {tot[0] * 1e6:8.1f} {tot[1] * 1e6:8.1f} {tot[2] * 1e6:8.1f} "
          f"{tot[3] * 1e6:8.1f} {(tot[1] - tot[3]) * 1e6:7.1f}   outputs equal bit for bit")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
