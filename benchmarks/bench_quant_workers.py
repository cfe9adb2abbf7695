"""`opkit quant` with one placement of its labelled evaluations beside another: the real command on a model's
zero-argument factory, side by side in one run, alternating which side runs first across repeats. Each side is
a string of options; "default" gives none, the placement a user gets (scoring.placed_workers). Models: the test
suite's small classifier (tests/quantdata/models.py:mixed_scale, labels from tests/quantdata's `labelled`; plain
PyTorch FP32 inference of the set is timed beside it), a trained zoo model (opkit/quant/amct/zoo, its own
labelled test images), the tests' ViT-style encoder (tests/quantdata/encoder.py, labels = its own top-1) and
ResNet-18 (examples/resnet, 100 classes, random init, BatchNorm statistics measured on the calibration images,
labels = its own top-1) at --size. Prints wall and CPU seconds of the command and its worker processes, the
evaluations, where they ran (the report's eval_backends), and whether the reports
agree (every strategy row's top-1, the recommendation).

    .venv/bin/python benchmarks/bench_quant_workers.py [--model mixed_scale|zoo:NAME|encoder|resnet18]
        [--eval 2000] [--search] [--size 64] [--repeats 1] [--sides "--workers 1;--workers 2"]

e.g. `--search --eval 2000 --sides "default;--workers 2" --repeats 2` (q13: the default placement on a large set)
or `--model encoder --eval 300 --search --sides "--workers 1;default"`.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _bench import ROOT, banner, load, opkit_cmd, run

import torch

sys.path.insert(0, str(ROOT / "tests"))

RESNET_FACTORY = '''import sys, torch
sys.path.insert(0, {examples!r})
from model import ResNet18

def model():
    m = ResNet18(num_classes=100)
    m.load_state_dict(torch.load({weights!r}))
    return m.eval()
'''

# the tests' encoder() is float16; the benchmarks run it in float32 (bench_quant_algos_search.py does too)
ENCODER_FACTORY = '''import sys
sys.path.insert(0, {tests!r})
from quantdata import encoder as E

def model():
    return E.encoder().float().eval()
'''


def setup(a, tmp: Path) -> tuple[str, str]:
    """(the MODEL spec, a description); writes calib.pt and val.pt into ``tmp``."""
    if a.model == "mixed_scale":
        from quantdata.models import inputs, labelled, mixed_scale
        m = mixed_scale()
        x, y = labelled(m, a.n, seed=1)
        torch.save({"x": inputs(64, seed=2)}, tmp / "calib.pt")
        torch.save({"x": x, "y": y}, tmp / "val.pt")
        t = time.perf_counter()
        with torch.no_grad():
            for i in range(0, len(x), 16):
                m(x[i:i + 16])
        print(f"   plain PyTorch FP32 inference of the set: {time.perf_counter() - t:.2f} s wall")
        return f"{ROOT / 'tests' / 'quantdata' / 'models.py'}:mixed_scale", "the tests' mixed_scale classifier"
    if a.model.startswith("zoo:"):
        from opkit.quant.amct import zoo
        name = a.model[4:]
        zoo.write_data(tmp, calib=16, test=a.n)
        return f"opkit.quant.amct.zoo:{name}", f"zoo {name}, trained, its own {a.n} test images"
    if a.model == "encoder":
        from quantdata import encoder as E
        m = E.encoder().float().eval()
        x, c = E.patches(a.n, 1).float(), E.patches(16, 2).float()
        (tmp / "encoder_factory.py").write_text(ENCODER_FACTORY.format(tests=str(ROOT / "tests")))
        spec, what = f"{tmp / 'encoder_factory.py'}:model", "the tests' encoder (10 Linear, float32)"
    elif a.model == "resnet18":
        import _models
        m, c, x = _models.example_resnet18(a.size, a.n)
        c = c[:16]
        torch.save(m.state_dict(), tmp / "resnet18.pt")
        (tmp / "resnet18_factory.py").write_text(RESNET_FACTORY.format(
            examples=str(ROOT / "examples" / "resnet"), weights=str(tmp / "resnet18.pt")))
        spec, what = f"{tmp / 'resnet18_factory.py'}:model", f"ResNet-18 (100 classes) at 3x{a.size}x{a.size}"
    else:
        raise SystemExit(f"--model {a.model}: mixed_scale, zoo:NAME, encoder or resnet18")
    with torch.no_grad():
        y = torch.cat([m(x[i:i + 64]).argmax(-1) for i in range(0, a.n, 64)])
    torch.save({"x": c}, tmp / "calib.pt")
    torch.save({"x": x, "y": y}, tmp / "val.pt")
    return spec, what


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mixed_scale")
    ap.add_argument("--eval", "--n", dest="n", type=int, default=2000, help="labelled samples")
    ap.add_argument("--search", action="store_true", help="with the searches (default: --no-search)")
    ap.add_argument("--size", type=int, default=64, help="--model resnet18: input size")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each side (the order alternates)")
    ap.add_argument("--sides", default="--workers 1;--workers 2", help="';'-separated options of each side "
                    "('default': none given), e.g. '--workers 1;default;--workers 1 --prefix-mb 0'")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        spec, what = setup(a, tmp)
        data = tmp / ("test.pt" if a.model.startswith("zoo:") else "val.pt")
        sides = a.sides.split(";")
        banner(f"opkit quant {' vs '.join(sides)}: {what}, {a.n} labelled")
        where = run([sys.executable, "-c", "import opkit; print(opkit.__file__)"], cwd=tmp)[2].strip()
        print(f"   the command's opkit: {where}")
        base = ["quant", spec, "--calib", str(tmp / "calib.pt"), "--data", str(data), "--target-drop", "3"]
        base += [] if a.search else ["--no-search"]
        reports, best = {}, {}
        for r in range(a.repeats):
            for s in (sides if r % 2 == 0 else sides[::-1]):
                out = tmp / f"r_{sides.index(s)}.json"
                out.unlink(missing_ok=True)
                opt = [] if s == "default" else s.split()
                wall, cpu, _ = run(opkit_cmd(*base, *opt, "--json", str(out)), cwd=tmp)
                rep = json.loads(out.read_text())
                reports[s] = rep
                best[s] = min(best.get(s, (wall, cpu)), (wall, cpu))
                print(f"   {s:28s} {wall:7.1f} s wall {cpu:7.1f} CPU s  {rep['evaluations']} "
                      f"evaluations  [{load()}]  {rep['eval_backends']}", flush=True)
        keys = ("strategies", "recommendation")
        rows = {s: ([(x["name"], x["top1"]) for x in r["strategies"]], r.get("recommendation")) for s, r in
                reports.items()}
        same = len({json.dumps(v, sort_keys=True, default=str) for v in rows.values()}) == 1
        print(f"   fastest wall: " + ", ".join(f"{s}: {w:.1f} s" for s, (w, _) in best.items()))
        print(f"   same {' and '.join(keys)} on every side: {same}")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
