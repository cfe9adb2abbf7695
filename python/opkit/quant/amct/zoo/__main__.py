"""``python -m opkit.quant.amct.zoo --train [NAME ...]``: retrain the zoo's models (weights stored in the package);
``--write-data DIR``: write the calibration and test sets for ``opkit quant opkit.quant.amct.zoo:<name>``."""
import argparse
import sys

from . import ZOO, train, write_data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opkit.quant.amct.zoo", description=__doc__)
    ap.add_argument("--train", action="store_true", help="retrain and store the weights")
    ap.add_argument("--write-data", metavar="DIR", help="write DIR/calib.pt (64 images) and DIR/test.pt (1000)")
    ap.add_argument("names", nargs="*", help=f"zoo models (default: all of {', '.join(ZOO)})")
    a = ap.parse_args(argv)
    bad = [n for n in a.names if n not in ZOO]
    if bad:
        ap.error(f"unknown zoo model(s) {', '.join(bad)}; the zoo: {', '.join(ZOO)}")
    if a.write_data:
        for p in write_data(a.write_data):
            print(p)
        return 0
    for n in a.names or list(ZOO):
        if a.train:
            train(n)
        else:
            print(f"{n}: {ZOO[n].family}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
