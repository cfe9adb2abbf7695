"""``evaluate()``: a model's variants over a labelled set, in process, on this machine's cores, or on Ray.

Shards are runs of whole batches (``batch_size`` consecutive indices), so every backend computes each sample
in the same batch and the merged predictions are identical sample for sample. Results merge by sample index
(result.Merger): a shard that runs twice fills the same rows.

- in process: ``workers=1``, a model given as a module without a spec, or a set too small to shard.
- local (default): a pool of ``workers`` processes (default: the machine's cores), each loading the model once
  and running with cores/workers torch threads; a worker that dies breaks the pool: a new pool reruns every
  shard that had not returned (up to ``retries`` times each).
- Ray (``ray="auto"`` or an address): ray_runner.py.
"""
from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Callable

import numpy as np
import torch.nn as nn

from ..data.sets import LabelledSet, load_dataset
from ..errors import OpkitError
from .result import EvalResult, Merger
from .shard import ModelRef, Prepared, described_variants
from .variants import FP32

DEFAULT_BATCH = 16


def shards_of(n: int, batch_size: int, shard_batches: int) -> list[list[int]]:
    """Index lists of ``shard_batches`` whole batches each (the last may be shorter)."""
    step = batch_size * shard_batches
    return [list(range(s, min(s + step, n))) for s in range(0, n, step)]


def layout(n: int, batch_size: int, workers: int | None, shard_batches: int | None = None) -> tuple[int, list]:
    """The workers (default: the machine's cores) and shards ``evaluate`` uses for ``n`` samples."""
    workers = max(1, int(workers if workers is not None else os.cpu_count() or 1))
    if shard_batches is None:        # about 4 shards per worker: balance, and little lost when one dies
        shard_batches = max(1, min(16, math.ceil(math.ceil(n / batch_size) / (4 * workers))))
    return workers, shards_of(n, batch_size, shard_batches)


def _pooled(workers: int, shards: list, spec) -> bool:
    return workers > 1 and len(shards) > 1 and spec is not None


def in_process(n: int, batch_size: int, workers: int | None, ray: str | None, spec: str | None,
               shard_batches: int | None = None) -> bool:
    """Whether ``evaluate`` runs these arguments' evaluation in this process (what state kept across
    evaluations in the caller's process, such as opkit quant's prefix reuse, needs)."""
    w, shards = layout(n, batch_size, workers, shard_batches)
    return not ray and not _pooled(w, shards, spec)


def evaluate(model: str | nn.Module | ModelRef, data, variants=None, *, transform=None, topk: int = 5,
             batch_size: int = DEFAULT_BATCH, workers: int | None = None, ray: str | None = None,
             shard_batches: int | None = None, retries: int = 2, progress: bool | Callable = False,
             model_spec: str | None = None, reference: bool = True, described: dict | None = None) -> EvalResult:
    """Evaluate ``variants`` (default: FP32 only; FP32 is added first when missing) of ``model`` on ``data``.

    ``model``: ``pkg.module:factory`` / ``file.py:factory`` spec, or an nn.Module (then in process or Ray).
    ``data``: a LabelledSet or what ``opkit.data.load_dataset`` takes (with ``transform``).
    ``topk``: predictions kept per sample (top-1 and top-5 are read from them).
    ``progress``: True = a rich progress bar on stderr; or a callable(samples_done, n, shards_done, shards).
    ``reference``: False runs only ``variants`` (a caller that already holds FP32's predictions, such as
    opkit quant's search, which evaluates one variant at a time and would otherwise pay an FP32 pass each time).
    ``described``: ``data.describe()`` when the caller already holds it for this set, unchanged (its content hash
    reads every sample: on a small model a third of an FP32 pass, paid again by every evaluation of a search).
    """
    t0 = time.monotonic()
    ref = model if isinstance(model, ModelRef) else ModelRef(spec=model) if isinstance(model, str) \
        else ModelRef(spec=model_spec, module=model)
    ds = data if isinstance(data, LabelledSet) else load_dataset(data, transform)
    variants = list(variants or [])
    if reference and not any(v.name == "fp32" for v in variants):
        variants.insert(0, FP32)
    if not variants:
        raise OpkitError("evaluate: no variant to run (reference=False and no variants given)")
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise OpkitError(f"evaluate: variant names must be unique; got {', '.join(names)}")
    if batch_size < 1 or topk < 1:
        raise OpkitError(f"evaluate: batch_size and topk must be at least 1; got {batch_size}, {topk}")
    n = len(ds)
    if n == 0:
        raise OpkitError(f"{ds.source}: the labelled set is empty")
    cores = os.cpu_count() or 1
    workers, shards = layout(n, batch_size, workers, shard_batches)
    merger = Merger(n, names, topk, check_classes=lambda c: ds.check_labels(c, f"model {ref.describe()}"))
    bar = _Progress(progress, n, len(shards))
    notes: list[str] = []
    if ray or _pooled(workers, shards, ref.spec):
        for v in variants:           # kernels built once here; workers load them from the cache
            getattr(v, "warm", lambda: None)()
    with bar:
        if ray:
            from .ray_runner import run_on_ray
            backend, used, reruns, prepared_variants = run_on_ray(ray, ref, ds, variants, shards, topk, batch_size,
                                                                  merger, bar, retries)
        elif _pooled(workers, shards, ref.spec):
            backend, used = f"local ({workers} processes)", workers
            reruns, prepared_variants = _run_pool(ref, ds, variants, shards, topk, batch_size, workers, cores,
                                                  merger, bar, retries)
        else:
            if workers > 1 and ref.spec is None:
                notes.append("ran in one process: a model given as a module (no factory spec) is not reloaded "
                             "by worker processes")
            backend, used, reruns = "in-process", 1, 0
            prep = Prepared(ref, ds, variants)
            for idx in shards:
                bar.advance(merger.add(prep.run(idx, topk, batch_size)))
            prepared_variants = prep.variants
    missing = merger.missing()
    if len(missing):
        raise OpkitError(f"evaluate: {len(missing)} sample(s) have no prediction (first: {ds.where(int(missing[0]))})")
    res = EvalResult(n=n, k=topk, labels=ds.labels().numpy().astype(np.int64), classes=list(ds.classes),
                     predictions=merger.pred, variants=[v.describe() for v in prepared_variants],
                     data=described if described is not None else ds.describe(), model=ref.describe(),
                     backend=backend, workers=used, shards=len(shards),
                     reruns=reruns, seconds=time.monotonic() - t0, num_classes=dict(merger.classes), notes=notes)
    _check_classes(res, ds)
    for v in res.variants:
        notes += [f"{v['name']}: {x}" for x in v.get("notes", [])]
    return res


def _check_classes(res: EvalResult, ds: LabelledSet) -> None:
    counts = set(res.num_classes.values())
    if len(counts) > 1:
        said = ", ".join(f"{k} {v}" for k, v in res.num_classes.items())
        raise OpkitError(f"the variants disagree on the number of classes ({said}): FP32 and device runs must "
                         "score the same classes")
    ds.check_labels(counts.pop(), f"model {res.model}")


class _Progress:
    """A rich progress bar (samples, shards, samples/s and the time left) on stderr, a callback, or nothing."""

    def __init__(self, progress, n: int, shards: int):
        self.cb = progress if callable(progress) else None
        self.show = progress is True
        self.n, self.shards, self.done, self.shards_done = n, shards, 0, 0
        self._p = None
        self._t0 = time.monotonic()

    def rate(self) -> str:
        """``12.3 samples/s, ETA 0:04:10`` from the samples done so far (start-up included, as a user waits)."""
        dt = time.monotonic() - self._t0
        if not self.done or dt <= 0:
            return "-- samples/s, ETA --"
        r = self.done / dt
        left = int(round((self.n - self.done) / r))
        return f"{r:.1f} samples/s, ETA {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"

    def __enter__(self):
        if self.show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            self._p = Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TextColumn("samples"),
                               TextColumn("{task.fields[shards]}"), TextColumn("{task.fields[rate]}"),
                               TimeElapsedColumn(),
                               console=Console(stderr=True), transient=False)
            self._p.__enter__()
            self._task = self._p.add_task("eval", total=self.n, shards=f"0/{self.shards} shards", rate=self.rate())
        return self

    def note(self, text: str) -> None:
        if self._p is not None:
            self._p.console.print(text, markup=False)

    def advance(self, samples: int) -> None:
        self.done += samples
        self.shards_done += 1
        if self._p is not None:
            self._p.update(self._task, completed=self.done, shards=f"{self.shards_done}/{self.shards} shards",
                           rate=self.rate())
        if self.cb:
            self.cb(self.done, self.n, self.shards_done, self.shards)

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.__exit__(*exc)


# -- local worker processes -------------------------------------------------------------------------------

_WORKER: dict = {}


def _keep_setup(setup: tuple) -> None:
    _WORKER["setup"] = setup          # shipped once per process, not with every shard


def _pool_task(sid: int, idx: list[int], k: int, batch_size: int) -> tuple[int, dict, list]:
    # The model is prepared by the first task a process runs (not in the pool initializer: an error there
    # would only break the pool; here it reaches the caller with its own message).
    if "prep" not in _WORKER:
        ref, ds, variants, sys_path, threads = _WORKER["setup"]
        import torch
        torch.set_num_threads(threads)
        _WORKER["prep"] = Prepared(ref, ds, variants, sys_path)
    prep = _WORKER["prep"]
    return sid, prep.run(idx, k, batch_size), [v.describe() for v in prep.variants]


def _run_pool(ref, ds, variants, shards, k, batch_size, workers, cores, merger, bar, retries):
    threads = max(1, cores // workers)
    todo = dict(enumerate(shards))
    attempts = {sid: 0 for sid in todo}
    reruns = 0
    described = None
    while todo:
        pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context("spawn"),
                                   initializer=_keep_setup, initargs=((ref, ds, variants, list(sys.path), threads),))
        broken = False
        try:
            with _main_not_reimported():
                futures = {pool.submit(_pool_task, sid, idx, k, batch_size): sid for sid, idx in todo.items()}
            for sid in todo:
                attempts[sid] += 1
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    try:
                        sid, res, described = f.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    bar.advance(merger.add(res))
                    todo.pop(sid, None)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if broken and todo:
            over = [sid for sid in todo if attempts[sid] > retries]
            if over:
                raise OpkitError(f"evaluate: a worker process died running shard(s) {over[:5]} (samples "
                                 f"{todo[over[0]][0]}..{todo[over[0]][-1]}) {retries + 1} times; giving up")
            reruns += len(todo)
            bar.note(f"a worker process died: rerunning {len(todo)} unfinished shard(s)")
    return reruns, described_variants(variants, described)


@contextmanager
def _main_not_reimported():
    """Spawned workers import the caller's ``__main__`` script unless it has neither ``__spec__`` nor ``__file__``:
    hide both while the pool starts its processes. The tasks live in this module, so a script that calls
    evaluate() needs no ``if __name__ == "__main__"`` guard."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__spec__", "__file__") if main is not None and k in main.__dict__}
    try:
        for k in saved:
            setattr(main, k, None) if k == "__spec__" else delattr(main, k)
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)
