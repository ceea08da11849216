#!/usr/bin/env python3
"""Trains MNIST as one trainer of a ShardTrain sync job, forward and backward in PyTorch (CPU).

    python3 clients/python/examples/train_mnist_torch.py --grpc 127.0.0.1:50051 [--submit job.conf]

The same trainer as train_mnist_numpy.py with the job's MLP as torch.nn.Linear layers: the blocks
hold W of shape [inputs, outputs] (y = x W + b), a Linear holds its transpose, so pulled values are
written into numpy arrays of the blocks' shape and copied into the layers, and gradients go back
transposed. Needs PyTorch (Debian: python3-torch).
"""

import os
import sys

# One BLAS thread unless told otherwise, set before torch and numpy load OpenBLAS: as in
# train_mnist_numpy.py, this model's products are too small to split.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import torch
except ImportError as e:
    print(f"train_mnist_torch: error: PyTorch is not importable ({e}); install python3-torch, or use "
          f"train_mnist_numpy.py", file=sys.stderr)
    sys.exit(2)

import numpy as np  # noqa: E402

from shardtrain.mnist_example import main  # noqa: E402
from shardtrain.model import dense_layers  # noqa: E402

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid}


class TorchMlp:
    def __init__(self, job):
        if job.activation not in ACTIVATIONS:
            raise ValueError(f"job {job.job_id}: activation '{job.activation}' is not one of {sorted(ACTIVATIONS)}")
        self.act = ACTIVATIONS[job.activation]
        self.layers = dense_layers(job)
        self.linear = [torch.nn.Linear(n_in, n_out) for _, _, n_in, n_out in self.layers]
        # What the pulls write into, in the blocks' layout.
        self.params = {}
        for w, b, n_in, n_out in self.layers:
            self.params[w] = np.zeros((n_in, n_out), dtype=np.float32)
            self.params[b] = np.zeros(n_out, dtype=np.float32)

    def loaded(self):
        with torch.no_grad():
            for (w, b, _, _), lin in zip(self.layers, self.linear):
                lin.weight.copy_(torch.from_numpy(self.params[w].T))
                lin.bias.copy_(torch.from_numpy(self.params[b]))

    def _logits(self, x):
        h = torch.from_numpy(np.ascontiguousarray(x))
        for i, lin in enumerate(self.linear):
            h = lin(h)
            if i < len(self.linear) - 1:
                h = self.act(h)
        return h

    def forward_backward(self, x, labels):
        for lin in self.linear:
            lin.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self._logits(x), torch.from_numpy(labels))
        loss.backward()
        return float(loss)

    def gradients(self):
        grads = {}
        for (w, b, _, _), lin in zip(self.layers, self.linear):
            grads[w] = lin.weight.grad.numpy().T
            grads[b] = lin.bias.grad.numpy()
        return grads


def accuracy(model, x, labels):
    with torch.no_grad():
        predicted = model._logits(x).argmax(dim=1).numpy()
    return float((predicted == labels).mean())


if __name__ == "__main__":
    sys.exit(main("train_mnist_torch", TorchMlp, accuracy))
