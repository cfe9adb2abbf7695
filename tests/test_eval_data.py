"""opkit.data: labelled sets (.pt/.npz, ImageFolder + transform), data hashes, golden sets with manifests."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from opkit.data import FolderSet, TensorSet, golden_set, load_dataset
from opkit.data.golden import choose
from opkit.errors import OpkitError


def _pt(tmp_path, name="set.pt", **data):
    p = tmp_path / name
    torch.save(data, p)
    return p


def test_pt_and_npz_hold_x_and_y(tmp_path):
    x, y = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
    a = load_dataset(_pt(tmp_path, x=x, y=y, classes=["cat", "dog", "eel"]))
    np.savez(tmp_path / "set.npz", x=x.numpy(), y=y.numpy())
    b = load_dataset(tmp_path / "set.npz")
    assert len(a) == len(b) == 6 and a.classes == ["cat", "dog", "eel"] and b.classes == ["0", "1", "2"]
    xb, yb = a.batch([4, 1])
    assert torch.equal(xb, x[[4, 1]]) and yb.tolist() == [1, 1]
    assert torch.equal(b.sample(5), x[5])
    # the hash covers labels, contents and class names
    assert load_dataset(_pt(tmp_path, "same.pt", x=x.clone(), y=y.clone(), classes=["cat", "dog", "eel"])).hash() == a.hash()
    y2 = y.clone()
    y2[3] = 1
    assert load_dataset(_pt(tmp_path, "other.pt", x=x, y=y2, classes=["cat", "dog", "eel"])).hash() != a.hash()


@pytest.mark.parametrize("data, said", [
    ({"x": torch.zeros(2, 3)}, "no 'y' (labels)"),
    ({"y": torch.zeros(2, dtype=torch.long)}, "no 'x' (inputs)"),
    ({"x": torch.zeros(2, 3), "y": torch.tensor([0.0, 1.0])}, "'y' must be a 1-D integer tensor"),
    ({"x": torch.zeros(3, 3), "y": torch.tensor([0, 1])}, "'x' holds 3 samples but 'y' holds 2 labels"),
    ({"x": torch.zeros(2, 3), "y": torch.tensor([0, -1])}, "negative label -1"),
    ({"x": torch.zeros(2, 3), "y": torch.tensor([0, 2]), "classes": ["a", "b"]}, "label 2 has no entry in 'classes'"),
])
def test_bad_tensor_files_name_the_file_and_field(tmp_path, data, said):
    p = _pt(tmp_path, **data)
    with pytest.raises(OpkitError, match=re.escape(said)) as e:
        load_dataset(p)
    assert str(p) in str(e.value)


def _folder(tmp_path, per_class=3, classes=("b_dog", "a_cat"), shape=(2, 4)):
    root = tmp_path / "folder"
    for k, c in enumerate(classes):
        (root / c).mkdir(parents=True)
        for i in range(per_class):
            np.save(root / c / f"{i}.npy", np.full(shape, 10 * k + i, dtype=np.float32))
    return root


def test_folder_labels_follow_sorted_class_folders(tmp_path):
    ds = load_dataset(_folder(tmp_path))
    assert isinstance(ds, FolderSet) and ds.classes == ["a_cat", "b_dog"]
    assert ds.labels().tolist() == [0, 0, 0, 1, 1, 1]
    assert ds.files[3] == "b_dog/0.npy" and float(ds.sample(3)[0, 0]) == 0.0      # b_dog was written as k=0
    x, y = ds.batch([0, 5])
    assert x.shape == (2, 2, 4) and y.tolist() == [0, 1]


def test_images_with_the_default_transform(tmp_path):
    from PIL import Image
    for c, colour in (("red", (255, 0, 0)), ("white", (255, 255, 255))):
        (tmp_path / "img" / c).mkdir(parents=True)
        Image.new("RGB", (5, 4), colour).save(tmp_path / "img" / c / "a.png")
    ds = load_dataset(tmp_path / "img")
    x = ds.sample(0)                                   # red: CHW, ImageNet-normalised
    assert x.shape == (3, 4, 5) and x.dtype == torch.float32
    assert x[0, 0, 0].item() == pytest.approx((1 - 0.485) / 0.229, rel=1e-5)
    assert x[1, 0, 0].item() == pytest.approx((0 - 0.456) / 0.224, rel=1e-5)
    crop = load_dataset(tmp_path / "img", "opkit.data.transforms:imagenet_eval").sample(1)
    assert crop.shape == (3, 224, 224)


def test_transform_errors_name_the_file_and_transform(tmp_path):
    root = _folder(tmp_path)
    t = tmp_path / "tf.py"
    t.write_text("import torch\n"
                 "def grow(x):\n    return torch.zeros(3 if float(x[0, 0]) == 12 else 2)\n"
                 "def bad(x):\n    return 'not a tensor'\n")
    ds = load_dataset(root, f"{t}:grow")
    with pytest.raises(OpkitError, match=r"a_cat/2.npy: input shape \[3\] differs from .*a_cat/0.npy's \[2\].*"
                                         r"tf.py:grow must return a fixed shape"):
        ds.batch([0, 1, 2])
    with pytest.raises(OpkitError, match=r"a_cat/0.npy: the transform .*tf.py:bad returned str, not a tensor"):
        load_dataset(root, f"{t}:bad").sample(0)
    with pytest.raises(OpkitError, match="has no function nope"):
        load_dataset(root, f"{t}:nope")
    with pytest.raises(OpkitError, match="--transform applies to folders"):
        load_dataset(_pt(tmp_path, x=torch.zeros(1, 2), y=torch.zeros(1, dtype=torch.long)), f"{t}:grow")


def test_golden_set_is_reproducible_and_verified(tmp_path):
    src = _folder(tmp_path, per_class=7)
    m1 = golden_set(src, tmp_path / "g1", per_class=3, seed=5)
    m2 = golden_set(src, tmp_path / "g2", per_class=3, seed=5)
    assert [s["sha256"] for s in m1["samples"]] == [s["sha256"] for s in m2["samples"]]
    assert m1["data_hash"] == m2["data_hash"] == load_dataset(tmp_path / "g1").hash()
    assert [s["class"] for s in m1["samples"]] == ["a_cat"] * 3 + ["b_dog"] * 3
    assert {"file", "class", "label", "sha256"} <= set(m1["samples"][0])
    # the choice depends on contents and seed, not on file names
    renamed = tmp_path / "renamed"
    for f in src.rglob("*.npy"):
        (renamed / f.parent.name).mkdir(parents=True, exist_ok=True)
        (renamed / f.parent.name / f"z{f.name}").write_bytes(f.read_bytes())
    m3 = golden_set(renamed, tmp_path / "g3", per_class=3, seed=5)
    assert [s["sha256"] for s in m3["samples"]] == [s["sha256"] for s in m1["samples"]]
    assert choose(load_dataset(src), 3, seed=6) != choose(load_dataset(src), 3, seed=5)
    # a later run proves it used the same data: a changed or extra file is an error
    g = tmp_path / "g1"
    (g / m1["samples"][0]["file"]).write_bytes(b"changed")
    with pytest.raises(OpkitError, match="sha256 differs from the one in .*manifest.json"):
        load_dataset(g)
    m2_dir = tmp_path / "g2"
    np.save(m2_dir / "a_cat" / "extra.npy", np.zeros(3))
    with pytest.raises(OpkitError, match=r"1 file\(s\) not in the manifest, e.g. a_cat/extra.npy"):
        load_dataset(m2_dir)


def test_golden_set_from_tensors_keeps_label_indices(tmp_path):
    x = torch.arange(40, dtype=torch.float32).reshape(20, 2)
    y = torch.tensor([3] * 10 + [1] * 10)
    src = _pt(tmp_path, x=x, y=y, classes=["zero", "one", "two", "three"])
    m = golden_set(src, tmp_path / "g", per_class=4)
    ds = load_dataset(tmp_path / "g")
    assert ds.classes == ["zero", "one", "two", "three"] and sorted(set(ds.labels().tolist())) == [1, 3]
    for i in range(len(ds)):            # each copied sample is the source row it names
        s = m["samples"][i]
        assert torch.equal(ds.sample(i), x[s["source_index"]]) and int(y[s["source_index"]]) == s["label"]
    assert m["short_classes"] == ["two", "zero"]


def test_golden_set_never_writes_into_a_used_folder(tmp_path):
    src = _folder(tmp_path)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(OpkitError, match="exists and is not an empty folder"):
        golden_set(src, out)
    assert (out / "notes.txt").read_text() == "keep me" and len(list(out.iterdir())) == 1
    with pytest.raises(OpkitError, match="--per-class must be at least 1"):
        golden_set(src, tmp_path / "new", per_class=0)
    assert not (tmp_path / "new").exists()


def test_labels_out_of_range_for_the_model():
    ds = TensorSet(torch.zeros(3, 2), torch.tensor([0, 4, 1]), source="val.pt")
    with pytest.raises(OpkitError, match=r"val.pt\[1\]: label 4 is out of range: m has 3 outputs"):
        ds.check_labels(3, "m")
