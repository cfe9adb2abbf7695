"""``python -m opkit.quant.amct [--amct CHECKOUT] [--model NAME ...] [--scenario NAME ...] [--record]``

Runs AMCT's classic PTQ flow (from a checkout of hicann/amct; default: $OPKIT_AMCT) and opkit's on the zoo's models
and config scenarios, and prints per layer the record equality and the output cosine of AMCT's fake-quant model
against opkit's ``amct-fake-quant`` simulation, then prediction agreement. ``--record`` stores AMCT's results in
the zoo (``<model>.amct.json``) for the CI check. Exits 1 when a record or a prediction differs.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch

from ...errors import OpkitError
from . import zoo
from .scenarios import SCENARIOS
from .setup import ENV, checkout_from_env, prepare


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opkit.quant.amct", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--amct", help=f"the AMCT checkout (default: ${ENV})")
    ap.add_argument("--model", action="append", choices=list(zoo.ZOO), help="zoo model (default: all)")
    ap.add_argument("--scenario", action="append", choices=list(SCENARIOS), help="config scenario (default: all)")
    ap.add_argument("--record", action="store_true", help="store AMCT's results in the zoo for the CI check")
    ap.add_argument("--cache", help="where the prepared AMCT copy goes (default: $OPKIT_AMCT_CACHE or "
                                    "~/.cache/opkit/amct)")
    a = ap.parse_args(argv)
    src = a.amct or checkout_from_env()
    if src is None:
        print(f"python -m opkit.quant.amct: give --amct CHECKOUT or set {ENV} (a clone of "
              "https://github.com/hicann/amct)", file=sys.stderr)
        return 2
    torch.set_num_threads(1)          # tiny models: threads only contend
    try:
        return _run(prepare(src, a.cache, log=lambda s: print(s, file=sys.stderr)), a)
    except OpkitError as e:
        print(f"python -m opkit.quant.amct: {e}", file=sys.stderr)
        return 2


def _run(checkout, a) -> int:
    import logging
    from .oracle import run_oracle
    from .portable import cpu_description
    from .refs import ModelRef, ScenarioRef, read_ref, ref_path, write_ref
    logging.getLogger().setLevel(logging.ERROR)
    print(checkout.describe())
    calib, (x, y) = zoo.calib_set(), zoo.test_set()
    bad, t0 = 0, time.monotonic()
    for name in a.model or list(zoo.ZOO):
        model = zoo.load(name)
        ref = ModelRef(name, checkout.commit, {"n": calib.shape[0], "seed": 11}, {"n": x.shape[0], "seed": 22}, {},
                       "float64" if a.record else "native", cpu_description())
        if a.record and ref_path(name).is_file():          # add to what is recorded for the same AMCT commit
            old = read_ref(name)
            if old.amct_commit == checkout.commit and old.arithmetic == ref.arithmetic:
                ref.scenarios.update(old.scenarios)
        for sc in a.scenario or list(SCENARIOS):
            print(f"[{time.monotonic() - t0:6.1f} s] {name} / {sc}", file=sys.stderr, flush=True)
            # a record is compared on other CPUs: made with arithmetic that is the same on every CPU
            r = run_oracle(checkout, name, model, calib, x, y, sc, portable=a.record)
            print("\n".join(r.lines()), flush=True)
            bad += (not r.records_equal) + (r.agree != r.samples)
            ref.scenarios[sc] = ScenarioRef(r.config, r.amct_records, r.amct_predictions, r.amct_top1)
        if a.record:
            print(f"recorded: {write_ref(ref)}")
    bad += _rejections(checkout, a.record)
    print(f"{'all equal' if not bad else f'{bad} difference(s)'}; {time.monotonic() - t0:.1f} s in all")
    return 1 if bad else 0


def _rejections(checkout, record: bool) -> int:
    """AMCT's errors for the configs it rejects, next to opkit's; ``record`` stores them for CI."""
    import json
    import tempfile
    from pathlib import Path
    from ..config import parse_config
    from .oracle import amct_rejections
    from .refs import REJECTIONS
    model = zoo.load("bn_cnn")
    with tempfile.TemporaryDirectory(prefix="opkit-amct-bad-") as tmp:
        res = amct_rejections(checkout, model, zoo.calib_set(), Path(tmp))
    bad = 0
    for name, r in res.items():
        try:
            parse_config(r["config"], model, f"{name}.json")
            ours = "(accepted)"
        except OpkitError as e:
            ours = str(e)
        same = bool(r["amct_error"]) and amct_message(r["amct_error"]) in ours
        bad += not same
        print(f"rejected config {name}: {'same message' if same else 'DIFFERS'}\n  AMCT:  {r['amct_error']}\n"
              f"  opkit: {ours}")
    if record:
        REJECTIONS.write_text(json.dumps({"amct_commit": checkout.commit, "model": "bn_cnn", "configs": res},
                                         indent=1) + "\n")
        print(f"recorded: {REJECTIONS}")
    return bad + _record_rejections(checkout, record)


def _record_rejections(checkout, record: bool) -> int:
    """AMCT's errors for the record files it rejects (save_model's reader), next to opkit's; ``record`` stores
    them for CI."""
    import json
    import tempfile
    from pathlib import Path
    from .oracle import amct_record_rejections
    from .refs import REJECTED_RECORDS, refuse_record
    model = zoo.load("bn_cnn")
    with tempfile.TemporaryDirectory(prefix="opkit-amct-badrec-") as tmp:
        res = amct_record_rejections(checkout, model, zoo.calib_set(), Path(tmp))
        bad = 0
        for name, r in res["records"].items():
            same, ours = refuse_record(model, r["text"], r["amct_error"], Path(tmp))
            bad += not same
            print(f"rejected record {name}: {'same message' if same else 'DIFFERS'}\n  AMCT:  {r['amct_error']}\n"
                  f"  opkit: {ours}")
    if record:
        REJECTED_RECORDS.write_text(json.dumps({"amct_commit": checkout.commit, "model": "bn_cnn"} | res,
                                               indent=1) + "\n")
        print(f"recorded: {REJECTED_RECORDS}")
    return bad


def amct_message(err: str) -> str:
    """AMCT's message without its " in layer <name>" suffix (opkit names the layer and field in front)."""
    import re
    return re.sub(r" in layer \S+$", "", err.strip())


if __name__ == "__main__":
    sys.exit(main())
