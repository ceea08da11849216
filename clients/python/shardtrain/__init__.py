"""ShardTrain's Python client: the gRPC API (client), a job's block layout and its MLP in numpy
(model), MNIST and the task reader (data), and a sync trainer (trainer)."""

from .client import Client, Pending, ShardTrainError
from .data import TaskReader, load_mnist
from .model import Layout, NumpyMlp
from .trainer import SyncTrainer, default_trainer_id

__all__ = ["Client", "Pending", "ShardTrainError", "TaskReader", "load_mnist", "Layout", "NumpyMlp",
           "SyncTrainer", "default_trainer_id"]
