import unittest

import numpy as np

from shardtrain import shardtrain_pb2 as pb
from shardtrain.model import Layout, NumpyMlp


def job(input_dim=5, hidden=(4,), classes=3, block_size=6, activation="relu"):
    j = pb.Job(job_id="j", input_dim=input_dim, classes=classes, hidden=list(hidden), activation=activation,
               block_size=block_size)
    widths = [input_dim, *hidden, classes]
    for n in range(1, len(widths)):
        for name, shape in ((f"dense{n}.weight", [widths[n - 1], widths[n]]), (f"dense{n}.bias", [widths[n]])):
            j.parameters.add(name=name, shape=shape)
            size = int(np.prod(shape))
            for i, offset in enumerate(range(0, size, block_size)):
                j.blocks.add(block_id=f"{name}#{i}", parameter=name, index=i, offset=offset,
                             length=min(block_size, size - offset))
    return j


class NumpyMlpTest(unittest.TestCase):
    def test_gradients_match_finite_differences_of_the_mean_loss(self):
        for activation in ("relu", "tanh", "sigmoid"):
            model = NumpyMlp(job(activation=activation))
            rng = np.random.default_rng(3)
            for p in model.params.values():
                p[...] = rng.normal(0, 0.5, p.shape)
            x = rng.normal(0, 1, (6, 5)).astype(np.float32)
            y = np.array([0, 1, 2, 2, 1, 0])
            model.forward_backward(x, y)
            for name, p in model.params.items():
                flat = p.reshape(-1)
                for k in range(0, flat.size, 3):
                    keep = flat[k]
                    flat[k] = keep + 1e-2
                    up = model.forward_backward(x, y)
                    flat[k] = keep - 1e-2
                    down = model.forward_backward(x, y)
                    flat[k] = keep
                    model.forward_backward(x, y)
                    self.assertAlmostEqual((up - down) / 2e-2, float(model.grads[name].reshape(-1)[k]), delta=2e-3,
                                           msg=f"{activation} {name}[{k}]")

    def test_a_job_that_is_not_an_mlp_is_refused_naming_its_parameters(self):
        j = job()
        j.parameters[1].name = "dense1.scale"
        with self.assertRaisesRegex(ValueError, "parameters \\['dense1.weight', 'dense1.scale'"):
            NumpyMlp(j)
        with self.assertRaisesRegex(ValueError, "activation 'gelu' is not one of"):
            NumpyMlp(job(activation="gelu"))


class LayoutTest(unittest.TestCase):
    def test_blocks_cut_row_major_parameters_and_pulls_land_where_they_were_cut(self):
        j = job()
        layout = Layout(j)
        grads = {"dense1.weight": np.arange(20, dtype=np.float32).reshape(5, 4),
                 "dense1.bias": np.arange(4, dtype=np.float32), "dense2.weight": np.ones((4, 3), np.float32),
                 "dense2.bias": np.zeros(3, np.float32)}
        slices = {b.block_id: v for b, v in layout.slices(grads)}
        self.assertEqual(["dense1.weight#0", "dense1.weight#1", "dense1.weight#2", "dense1.weight#3", "dense1.bias#0",
                          "dense2.weight#0", "dense2.weight#1", "dense2.bias#0"], list(slices))
        self.assertEqual([18.0, 19.0], slices["dense1.weight#3"].tolist())
        params = {k: np.zeros_like(v) for k, v in grads.items()}
        layout.write(params, pb.BlockValues(parameter="dense1.weight", offset=6, values=[1, 2, 3, 4, 5, 6]))
        self.assertEqual([0, 0, 1, 2], params["dense1.weight"][1].tolist())
        self.assertEqual([3, 4, 5, 6], params["dense1.weight"][2].tolist())

    def test_a_job_without_parameter_shapes_is_refused(self):
        j = job()
        del j.parameters[:]
        with self.assertRaisesRegex(ValueError, "lists no parameters"):
            Layout(j)
