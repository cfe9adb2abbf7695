"""opkit.evaluate: variants through the one simulation engine, top-k known by construction, the local
process runner equal to the in-process one sample for sample, a killed worker's shard rerun."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from evaldata.models import C, known_set, scaled
from opkit.accuracy.policy import load_policy
from opkit.accuracy.simulate import Simulator
from opkit.data import TensorSet, load_dataset
from opkit.errors import OpkitError
from opkit.evaluate import SimVariant, evaluate
from opkit.evaluate.result import Merger

FP16 = SimVariant("fp16", policy="fp16-compute", naive=False)


def test_top1_top5_known_by_construction():
    x, y = known_set(n=200, right=140, top5_extra=20, overflow=10)
    r = evaluate(scaled(), TensorSet(x, y), [FP16], workers=1)
    assert r.n == 200 and r.backend == "in-process"
    assert r.topk("fp32", 1) == pytest.approx(70.0) and r.topk("fp32", 5) == pytest.approx(80.0)
    # fp16-compute: 100 * 700 overflows fp16; those 10 rows' outputs are inf, counted as wrong
    assert r.topk("fp16", 1) == pytest.approx(65.0) and r.topk("fp16", 5) == pytest.approx(75.0)
    changed = r.changed("fp16")
    assert [c["index"] for c in changed] == list(range(10))
    assert all(c["effect"] == "lost" and c["fp16"] == -1 for c in changed)
    j = r.to_json("fp16")
    assert j["top1"] == pytest.approx(65.0) and j["fp32"]["top1"] == pytest.approx(70.0) and j["n"] == 200
    assert j["predictions"][:10] == [-1] * 10 and j["predictions"][10:] == x[10:].argmax(1).tolist()
    per = {p["class"]: p for p in j["per_class"]}
    assert sum(p["n"] for p in per.values()) == 200
    for c, p in per.items():
        sel = y == int(c)
        assert p["top1"] == pytest.approx(100.0 * float((r.predictions["fp16"][sel.numpy(), 0] == int(c)).mean()))


def test_records_off_is_the_same_run():
    pol = load_policy("fp16-compute")
    x = torch.randn(4, C)
    a, recs = Simulator(pol, naive=False).run(scaled(), (x,))
    b, none = Simulator(pol, naive=False).run(scaled(), (x,), record=False)
    assert recs and none == [] and torch.equal(a, b)


def test_bad_input_errors():
    x, y = known_set(n=8, right=8, overflow=0)
    with pytest.raises(OpkitError, match=r"label 12 is out of range: model Linear has 10 outputs"):
        evaluate(scaled(), TensorSet(x, torch.tensor([12] + y[1:].tolist())), workers=1)
    with pytest.raises(OpkitError, match=r"model output shape \[8, 2, 5\] is not \[batch, classes\]"):
        evaluate(torch.nn.Unflatten(1, (2, 5)), TensorSet(x, y), workers=1)

    class Wider(torch.nn.Module):        # a "device" variant that scores other classes than FP32
        name = "wider"

        def describe(self):
            return {"name": self.name}

        def prepare(self, model):
            return lambda b: torch.cat([model(b), torch.zeros(len(b), 1)], 1)
    with pytest.raises(OpkitError, match="variants disagree on the number of classes .*fp32 10, wider 11"):
        evaluate(scaled(), TensorSet(x, y), [Wider()], workers=1)


def test_merger_counts_a_rerun_shard_once():
    m = Merger(6, ["fp32"], 1)
    shard = {"indices": [2, 3], "topk": {"fp32": np.array([[1], [0]])}, "classes": {"fp32": 4}}
    assert m.add(shard) == 2 and m.add(shard) == 0
    assert list(m.missing()) == [0, 1, 4, 5]
    with pytest.raises(OpkitError, match="a rerun of samples 2..3 predicted differently"):
        m.add({"indices": [2, 3], "topk": {"fp32": np.array([[1], [1]])}, "classes": {"fp32": 4}})


def test_local_processes_equal_in_process_and_rerun_a_killed_worker(tmp_path, monkeypatch):
    """Two worker processes (the machine's cores), a transform that kills its process on one sample once:
    the unfinished shards are rerun, every sample counted once, predictions equal to the in-process run."""
    x, y = known_set(n=96, right=60, top5_extra=10, overflow=6, seed=3)
    x[50, :] = 0.0
    x[50, 0] = 999.0                            # the sample that kills its worker the first time
    root = tmp_path / "set"
    for i in range(len(x)):
        d = root / f"c{int(y[i]):02d}"
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / f"{i:03d}.npy", x[i].numpy())
    kill_dir = tmp_path / "kills"
    kill_dir.mkdir()
    monkeypatch.setenv("OPKIT_TEST_KILL_DIR", str(kill_dir))
    ds = load_dataset(root, "evaldata.models:kill_once")
    (kill_dir / "killed-already").write_text("")    # the in-process reference run must not die
    ref = evaluate("evaldata.models:scaled", ds, [FP16], workers=1, batch_size=8)
    (kill_dir / "killed-already").unlink()
    seen = []
    par = evaluate("evaldata.models:scaled", ds, [FP16], workers=2, batch_size=8, shard_batches=2,
                   progress=lambda done, n, s, shards: seen.append((done, s)))
    assert par.backend == "local (2 processes)" and par.shards == 6
    assert par.reruns >= 1 and list(kill_dir.iterdir())
    assert seen[-1] == (96, 6) and all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    for name in ("fp32", "fp16"):
        assert np.array_equal(par.predictions[name], ref.predictions[name])
    assert par.topk("fp16") == ref.topk("fp16") and par.topk("fp32") == ref.topk("fp32")
