"""A client of a ShardTrain node's gRPC API (actors/src/main/protobuf/shardtrain.proto).

Every call raises ShardTrainError on failure, carrying the gRPC status code and the node's
description of the problem (docs/OPERATIONS.md, "The gRPC API").
"""

import grpc

from . import shardtrain_pb2 as pb
from .wire import decode_pulled, encode_push

_SERVICE = "/shardtrain.v1.ShardTrainApi/"


class ShardTrainError(Exception):
    """A failed call: `code` is the grpc.StatusCode, `message` the node's description."""

    def __init__(self, call, code, message):
        super().__init__(f"{call}: {code.name}: {message}")
        self.call = call
        self.code = code
        self.message = message


def _error(call, e):
    if isinstance(e, grpc.RpcError) and hasattr(e, "code"):
        return ShardTrainError(call, e.code(), e.details() or "")
    return ShardTrainError(call, grpc.StatusCode.UNKNOWN, str(e))


class Pending:
    """A call in flight; result() waits for it and raises ShardTrainError when it failed."""

    def __init__(self, call, future):
        self._call = call
        self._future = future

    def done(self):
        return self._future.done()

    def result(self, timeout=None):
        try:
            return self._future.result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise ShardTrainError(self._call, grpc.StatusCode.DEADLINE_EXCEEDED,
                                  f"no answer within {timeout} s") from None
        except grpc.RpcError as e:
            raise _error(self._call, e) from None


class _PendingPull:
    def __init__(self, stream):
        self._stream = stream

    def result(self):
        try:
            return {v.block_id: v for v in self._stream}
        except grpc.RpcError as e:
            raise _error("PullParameters", e) from None


def _check_target(target):
    host, sep, port = (target or "").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"a node's gRPC address is HOST:PORT, not '{target}'")
    return target


def _read(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"cannot read {what} {path}: {e.strerror}") from None


class Client:
    """One channel to one node. Calls block; push_async and report_async return a Pending.

    A node with shardtrain.security on speaks TLS and wants the cluster's bearer token on every call:
    give ca_file (the CA's PEM certificate, ca.pem of scripts/make-certs.sh) and token or token_file.
    """

    def __init__(self, target, timeout=30.0, ca_file=None, token=None, token_file=None):
        self.target = _check_target(target)
        self.timeout = timeout
        if token_file is not None:
            token = _read(token_file, "the token file").decode("utf-8").strip()
            if not token:
                raise ValueError(f"the token file {token_file} is empty")
        # gRPC's default 4 MiB limit is a block of about a million floats; a job's block size may be more.
        options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
        if ca_file is not None:
            credentials = grpc.ssl_channel_credentials(root_certificates=_read(ca_file, "the CA certificate"))
            if token is not None:
                credentials = grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))
            self._channel = grpc.secure_channel(target, credentials, options=options)
        elif token is not None:
            # A token in plaintext would be readable on the way: gRPC refuses it too.
            raise ValueError("a bearer token needs TLS: give ca_file as well")
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        unary = {
            "SubmitJob": (pb.SubmitJobRequest, pb.SubmitJobReply),
            "GetStatus": (pb.StatusRequest, pb.ClusterStatus),
            "RegisterTrainer": (pb.RegisterTrainerRequest, pb.RegisterTrainerReply),
            "Heartbeat": (pb.HeartbeatRequest, pb.HeartbeatReply),
            "LeaseTask": (pb.LeaseTaskRequest, pb.LeaseTaskReply),
            "ReportProgress": (pb.ReportProgressRequest, pb.ReportProgressReply),
            "LeaveJob": (pb.LeaveJobRequest, pb.LeaveJobReply),
            "SaveModel": (pb.SaveModelRequest, pb.SaveModelReply),
            "Checkpoint": (pb.CheckpointRequest, pb.CheckpointReply),
            "CancelJob": (pb.CancelJobRequest, pb.CancelJobReply),
        }
        self._calls = {name: self._channel.unary_unary(_SERVICE + name, request_serializer=req.SerializeToString,
                                                       response_deserializer=rep.FromString)
                       for name, (req, rep) in unary.items()}
        # Pushes and pulls carry their floats between numpy and the wire directly (wire.py).
        self._calls["PushGradient"] = self._channel.unary_unary(
            _SERVICE + "PushGradient", request_serializer=lambda r: encode_push(*r),
            response_deserializer=pb.PushReply.FromString)
        self._pull = self._channel.unary_stream(_SERVICE + "PullParameters",
                                                request_serializer=pb.PullRequest.SerializeToString,
                                                response_deserializer=decode_pulled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._channel.close()

    def connect(self, wait=5.0):
        """Waits until the channel is up; ShardTrainError UNAVAILABLE naming the address otherwise."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=wait)
        except grpc.FutureTimeoutError:
            raise ShardTrainError("connect", grpc.StatusCode.UNAVAILABLE,
                                  f"no ShardTrain gRPC API answered at {self.target} within {wait:g} s") from None
        return self

    def _call(self, name, request, timeout=None):
        try:
            return self._calls[name](request, timeout=timeout or self.timeout)
        except grpc.RpcError as e:
            raise _error(name, e) from None

    def _async(self, name, request, timeout=None):
        return Pending(name, self._calls[name].future(request, timeout=timeout or self.timeout))

    # ---- jobs ----

    def submit_job(self, job_config, input_dim, train_examples, classes):
        """Submits the job described by HOCON `job_config` for a data set of that shape; its Job."""
        shape = pb.DatasetShape(input_dim=input_dim, train_examples=train_examples, classes=classes)
        return self._call("SubmitJob", pb.SubmitJobRequest(job_config=job_config, shape=shape)).job

    def status(self, include_blocks=False, job_id=""):
        """The ClusterStatus of job ``job_id`` (empty: the newest running job, else the newest finished one)."""
        return self._call("GetStatus", pb.StatusRequest(include_blocks=include_blocks, job_id=job_id))

    def cancel_job(self, job_id):
        """Cancels running job ``job_id``: its trainers finish the step they are in and leave. The CancelJobReply
        (job id, the trainers told, the last step each had reported)."""
        if not job_id:
            raise ValueError("cancel_job needs a job id")
        return self._call("CancelJob", pb.CancelJobRequest(job_id=job_id))

    # ---- trainers ----

    def register(self, trainer_id, job_id=""):
        """Joins job job_id ("": the newest running job); the RegisterTrainerReply (job, membership epoch, last step,
        generation)."""
        return self._call("RegisterTrainer", pb.RegisterTrainerRequest(trainer_id=trainer_id, job_id=job_id))

    def heartbeat(self, trainer_id, job_id=""):
        """Keeps the trainer in the job; the rollbacks (step, generation) the master announced since the last one."""
        return list(self.heartbeat_reply(trainer_id, job_id).rollbacks)

    def heartbeat_reply(self, trainer_id, job_id=""):
        """As heartbeat, the whole HeartbeatReply: rollbacks, and job_cancelled once the job was cancelled."""
        return self._call("Heartbeat", pb.HeartbeatRequest(trainer_id=trainer_id, job_id=job_id))

    def lease(self, trainer_id, job_id=""):
        """The master's LeaseTaskReply: one of lease, wait, no_task, not_registered (WhichOneof('reply'))."""
        return self._call("LeaseTask", pb.LeaseTaskRequest(trainer_id=trainer_id, job_id=job_id))

    def report_async(self, trainer_id, epoch, task, steps, generation, job_id=""):
        """Reports (step, reader offset after it) pairs of one task."""
        if not steps:
            raise ValueError("a progress report needs a step")
        request = pb.ReportProgressRequest(trainer_id=trainer_id, epoch=epoch, task=task, generation=generation,
                                           steps=[pb.StepOffset(step=s, offset=o) for s, o in steps], job_id=job_id)
        return self._async("ReportProgress", request)

    def report(self, trainer_id, epoch, task, steps, generation, job_id=""):
        return self.report_async(trainer_id, epoch, task, steps, generation, job_id).result()

    def leave(self, trainer_id, job_id=""):
        self._call("LeaveJob", pb.LeaveJobRequest(trainer_id=trainer_id, job_id=job_id))

    # ---- parameters ----

    def pull(self, job_id, min_version=0, block_ids=(), timeout=None):
        """The blocks (all when block_ids is empty) once each is at min_version or later: {block_id: Pulled}
        (wire.Pulled: BlockValues' fields, its values a float32 array)."""
        return self.pull_async(job_id, min_version, block_ids, timeout).result()

    def pull_async(self, job_id, min_version=0, block_ids=(), timeout=None):
        """A pull sent now, whose result() is pull's: a sync block holds it until its step is applied, so it
        can leave right behind the step's pushes."""
        request = pb.PullRequest(job_id=job_id, block_ids=list(block_ids), min_version=min_version)
        return _PendingPull(self._pull(request, timeout=timeout or self.timeout))

    def push_async(self, job_id, block_id, trainer_id, step, base_version, membership_epoch, weight, values,
                   generation, mark=None):
        """One block's gradient for one step (values: a float32 array, or empty with weight 0 for a step
        without data); mark: (epoch, task, reader offset after the batch). Completes with the PushReply."""
        request = pb.PushRequest(job_id=job_id, block_id=block_id, trainer_id=trainer_id, step=step,
                                 base_version=base_version, membership_epoch=membership_epoch, weight=weight,
                                 generation=generation)
        if mark is not None:
            request.mark.CopyFrom(pb.TaskMark(epoch=mark[0], task=mark[1], offset=mark[2]))
        return self._async("PushGradient", (request, values))

    def push(self, *args, **kwargs):
        return self.push_async(*args, **kwargs).result()

    # ---- models and checkpoints ----

    def save_model(self, directory, npy_dir="", min_version=0, job_id=""):
        """Saves job ``job_id``'s model (empty: the newest running job, else the newest finished one).

        A click-through job's model (its dense part and its table's rows) is saved once the job is done
        or cancelled; while it trains the call fails with FAILED_PRECONDITION."""
        return self._call("SaveModel", pb.SaveModelRequest(dir=directory, npy_dir=npy_dir, min_version=min_version,
                                                           job_id=job_id))

    def checkpoint(self, directory="", job_id=""):
        """Checkpoints job ``job_id`` (empty: the newest running job, else the newest finished one)."""
        return self._call("Checkpoint", pb.CheckpointRequest(dir=directory, job_id=job_id))
