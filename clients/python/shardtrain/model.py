"""A job's model as its blocks see it, and the MLP a ShardTrain job trains, in numpy.

A job's parameters (Job.parameters) are row-major arrays; each is cut into blocks (Job.blocks) of
values [offset, offset + length) of the flattened parameter. The MLP is the JVM's
(compute/nn/Mlp): dense layers denseN with y = x W + b, W of shape [inputs, outputs], the job's
activation between them, softmax cross-entropy on top; gradients are of the batch's mean loss.
"""

import re

import numpy as np


class Layout:
    """The job's parameters (name -> shape) and blocks, with the conversions between them."""

    def __init__(self, job):
        if not job.parameters:
            raise ValueError(f"job {job.job_id} lists no parameters: the node serves an API older than this client")
        self.shapes = {p.name: tuple(p.shape) for p in job.parameters}
        self.blocks = list(job.blocks)
        for b in self.blocks:
            if b.parameter not in self.shapes:
                raise ValueError(f"block {b.block_id} belongs to parameter '{b.parameter}', which job {job.job_id} "
                                 f"does not list")
            size = int(np.prod(self.shapes[b.parameter]))
            if b.offset + b.length > size:
                raise ValueError(f"block {b.block_id} covers values [{b.offset}, {b.offset + b.length}) of "
                                 f"{b.parameter}, which has {size}")
        self.block_ids = [b.block_id for b in self.blocks]

    def write(self, params, values):
        """Writes a pulled block (wire.Pulled or BlockValues) into `params` (name -> array of the parameter's shape)."""
        flat = params[values.parameter].reshape(-1)
        n = len(values.values)
        flat[values.offset:values.offset + n] = np.asarray(values.values, dtype=np.float32)

    def slices(self, grads):
        """(block, float32 slice of its parameter's gradient) for every block, given name -> gradient array."""
        for b in self.blocks:
            flat = np.ascontiguousarray(grads[b.parameter], dtype=np.float32).reshape(-1)
            yield b, flat[b.offset:b.offset + b.length]


_DENSE = re.compile(r"dense(\d+)\.(weight|bias)$")


def dense_layers(job):
    """[(weight name, bias name, inputs, outputs)] of an MLP job, checked; ValueError naming the problem."""
    names = [p.name for p in job.parameters]
    shapes = {p.name: tuple(p.shape) for p in job.parameters}
    layers = []
    for i in range(0, len(names), 2):
        w = names[i]
        b = names[i + 1] if i + 1 < len(names) else None
        n = i // 2 + 1
        if w != f"dense{n}.weight" or b != f"dense{n}.bias":
            raise ValueError(f"job {job.job_id} is not an MLP this trainer knows: parameters {names} are not "
                             f"dense1.weight, dense1.bias, dense2.weight, ...")
        if len(shapes[w]) != 2 or shapes[b] != (shapes[w][1],):
            raise ValueError(f"job {job.job_id}: {w} has shape {list(shapes[w])} and {b} {list(shapes[b])}; "
                             f"a dense layer needs [inputs, outputs] and [outputs]")
        if layers and layers[-1][3] != shapes[w][0]:
            raise ValueError(f"job {job.job_id}: {w} takes {shapes[w][0]} inputs but the layer below gives "
                             f"{layers[-1][3]}")
        layers.append((w, b, shapes[w][0], shapes[w][1]))
    if layers[0][2] != job.input_dim or layers[-1][3] != job.classes:
        raise ValueError(f"job {job.job_id}: the layers take {layers[0][2]} inputs and give {layers[-1][3]} classes, "
                         f"the job says {job.input_dim} and {job.classes}")
    return layers


def _relu(z):
    return np.maximum(z, 0, out=z)


def _relu_grad(g, a):
    g[a <= 0] = 0
    return g


def _tanh(z):
    return np.tanh(z, out=z)


def _tanh_grad(g, a):
    return g * (1 - a * a)


def _sigmoid(z):
    return np.divide(1, 1 + np.exp(-z), out=z)


def _sigmoid_grad(g, a):
    return g * a * (1 - a)


ACTIVATIONS = {"relu": (_relu, _relu_grad), "tanh": (_tanh, _tanh_grad), "sigmoid": (_sigmoid, _sigmoid_grad)}


class NumpyMlp:
    """The job's MLP on numpy float32 arrays: forward, softmax cross-entropy and backward."""

    def __init__(self, job):
        if job.activation not in ACTIVATIONS:
            raise ValueError(f"job {job.job_id}: activation '{job.activation}' is not one of {sorted(ACTIVATIONS)}")
        self.layers = dense_layers(job)
        self.act, self.act_grad = ACTIVATIONS[job.activation]
        self.params = {}
        for w, b, n_in, n_out in self.layers:
            self.params[w] = np.zeros((n_in, n_out), dtype=np.float32)
            self.params[b] = np.zeros(n_out, dtype=np.float32)
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def _forward(self, x):
        """The input and output of each layer (outputs after the activation), and the logits."""
        acts = [x]
        last = len(self.layers) - 1
        for i, (w, b, _, _) in enumerate(self.layers):
            z = acts[-1] @ self.params[w]
            z += self.params[b]
            acts.append(z if i == last else self.act(z))
        return acts

    def forward_backward(self, x, labels):
        """The batch's mean loss; self.grads then hold its gradients."""
        acts = self._forward(x)
        logits = acts[-1]
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        p = e / e.sum(axis=1, keepdims=True)
        n = len(labels)
        rows = np.arange(n)
        loss = float(-np.log(np.maximum(p[rows, labels], 1e-30)).mean())
        g = p
        g[rows, labels] -= 1
        g /= n
        for i in range(len(self.layers) - 1, -1, -1):
            w, b, _, _ = self.layers[i]
            np.matmul(acts[i].T, g, out=self.grads[w])
            np.sum(g, axis=0, out=self.grads[b])
            if i > 0:
                g = self.act_grad(g @ self.params[w].T, acts[i])
        return loss

    def gradients(self):
        return self.grads

    def loaded(self):
        """Pulls write into self.params directly: nothing to copy."""

    def predict(self, x, batch=10000):
        out = []
        for i in range(0, len(x), batch):
            out.append(self._forward(x[i:i + batch])[-1].argmax(axis=1))
        return np.concatenate(out)

    def accuracy(self, x, labels):
        return float((self.predict(x) == labels).mean())
