"""A trainer of a sync job over the gRPC API, with any model that computes a batch's gradients.

What it does is what a JVM trainer does (actors/trainer/Trainer): register, pull every block,
lease a task, and per step: compute the gradients of one batch on the values of version t-1, push
each block's slice as step t (weight: the batch's examples), pull the blocks at version t; report
each step's reader offset; lease the next task once the task is read. A step it has no data for
(no task free while the job runs) it takes part in with empty pushes, so the barrier does not wait
for it. A heartbeat thread keeps it in the job; after a rollback of the job, or when the master no
longer knows it, it registers again and resumes where the master says. Once a heartbeat or a progress
report's reply says the job was cancelled, it finishes the step it is in, reports it and leaves.
"""

import os
import threading
import time

import grpc

from .client import ShardTrainError
from .data import TaskReader
from .model import Layout


class Model:
    """What the trainer needs of a model. params: name -> array the pulls write into;
    forward_backward(x, labels) -> mean loss, after which gradients() gives name -> array."""

    params = {}

    def forward_backward(self, x, labels):
        raise NotImplementedError

    def gradients(self):
        raise NotImplementedError

    def loaded(self):
        """Called after pulled values were written into params."""


class _Rejoin(Exception):
    """The job rolled back, or the master forgot this trainer: register again."""


class SyncTrainer:
    def __init__(self, client, trainer_id, make_model, train_x, train_y, log=print, heartbeat_s=5.0,
                 report_every=1, patience=300.0, job_id=""):
        if not trainer_id or not trainer_id.strip():
            raise ValueError("a trainer needs a non-blank id")
        self.client = client
        self.id = trainer_id
        # The job to join ("": the newest running one); once registered, the job it joined, which every
        # later call names so that a job submitted meanwhile does not take them.
        self.job_id = job_id
        self.make_model = make_model
        self.x = train_x
        self.y = train_y
        self.log = log
        self.heartbeat_s = heartbeat_s
        self.report_every = report_every
        # How long a step's pushes and pull are sent again while they time out (other trainers are slow).
        self.patience = patience
        self.model = None
        self.layout = None
        self.job = None
        self.steps = 0          # steps this trainer pushed data for
        self.idle_steps = 0     # steps it pushed nothing for
        self.version = 0        # the blocks' version it last pulled
        self._rollbacks = []
        self._cancelled = threading.Event()
        # Seconds of this trainer's steps with data: reading and computing the batch and sending its pushes,
        # waiting for the pushes' answers (every trainer's push of the step), reading the pulled values.
        self.times = {"compute": 0.0, "push": 0.0, "pull": 0.0}
        self._stop = threading.Event()
        self._failure = None

    # ---- the job ----

    def run(self):
        """Trains until the job is done (or the job's step count is reached); returns the last step."""
        beat = threading.Thread(target=self._heartbeats, name=f"heartbeat-{self.id}", daemon=True)
        beat.start()
        try:
            while True:
                try:
                    return self._session()
                except _Rejoin as why:
                    self.log(f"trainer {self.id}: {why}; registering again")
        finally:
            self._stop.set()

    def _session(self):
        reg = self.client.register(self.id, self.job_id)
        job = reg.job
        self.job_id = job.job_id
        if job.mode != "sync":
            raise ValueError(f"job {job.job_id} runs in {job.mode} mode; this trainer takes part in sync jobs only")
        if self.job is None:
            self.job = job
            self.layout = Layout(job)
            self.model = self.make_model(job)
            length = f"{job.steps} steps" if job.steps > 0 else f"{job.epochs} epochs"
            self.log(f"trainer {self.id}: job {job.job_id}, {len(job.blocks)} blocks, batch {job.batch}, {length}")
        self._rollbacks.clear()
        self.generation = reg.generation
        self.membership = reg.membership_epoch
        oldest, newest = self._pull(0)
        first = True
        step = oldest
        while True:
            if job.steps > 0 and step >= job.steps:
                return self._leave(f"reached step {job.steps}", step)
            if self._cancelled.is_set():
                return self._leave("job cancelled", step)
            answer = self.client.lease(self.id, self.job_id)
            kind = answer.WhichOneof("reply")
            if kind == "wait":
                self._check()
                time.sleep(0.05)
                continue
            if kind == "not_registered":
                raise _Rejoin("the master no longer knows it")
            if first:
                # Every block knows this trainer now: pull again. Blocks a version ahead closed a step
                # without it, which it takes part in with no data.
                oldest, newest = self._pull(0)
                step = oldest
                first = False
                if newest > oldest:
                    step = self._idle(step)
            if kind == "no_task":
                if answer.no_task.job_done:
                    return self._leave("job done", step)
                step = self._idle(step)
                continue
            if answer.lease.offset > 0:
                self.log(f"trainer {self.id} resumes task {answer.lease.epoch}/{answer.lease.task} at offset "
                         f"{answer.lease.offset} after step {step}")
            step = self._task(answer.lease, step)

    def _task(self, lease, step):
        reader = TaskReader(lease, self.job.batch, self.job.seed)
        mark_epoch, mark_task = lease.epoch, lease.task
        unreported = []
        in_flight = None
        loss_sum, batches = 0.0, 0
        while not reader.done():
            if (self.job.steps > 0 and step >= self.job.steps) or self._cancelled.is_set():
                break
            self._check()
            t0 = time.perf_counter()
            indices, offset_after = reader.next()
            loss_sum += self.model.forward_backward(self.x[indices], self.y[indices])
            batches += 1
            step += 1
            grads = self.model.gradients()
            pushes = {}
            for block, values in self.layout.slices(grads):
                if reader.holds(block.block_id, offset_after):
                    pushes[block.block_id] = ([], 0.0, None)
                else:
                    pushes[block.block_id] = (values, float(len(indices)), (mark_epoch, mark_task, offset_after))
            pending = {b: self._push(b, step, *p) for b, p in pushes.items()}
            pull = self.client.pull_async(self.job.job_id, step)
            self.times["compute"] += (t1 := time.perf_counter()) - t0
            self._await(pending, pushes, step)
            self.times["push"] += (t2 := time.perf_counter()) - t1
            self._load(self._result(pull, step))
            self.times["pull"] += time.perf_counter() - t2
            self.steps += 1
            unreported.append((step, offset_after))
            # One report in flight at a time; the steps completed meanwhile go with the next.
            if in_flight is not None and in_flight.done():
                self._reported(in_flight.result())
                in_flight = None
            if in_flight is None and len(unreported) >= self.report_every:
                in_flight = self.client.report_async(self.id, mark_epoch, mark_task, unreported, self.generation,
                                                      self.job_id)
                unreported = []
        if in_flight is not None:
            self._reported(in_flight.result())
        if unreported:
            self._reported(self.client.report(self.id, mark_epoch, mark_task, unreported, self.generation,
                                              self.job_id))
        if batches:
            self.log(f"trainer {self.id}: task {mark_epoch}/{mark_task} read to offset {reader.offset} at step {step}, "
                     f"mean loss {loss_sum / batches:.4f}")
        return step

    def _reported(self, reply):
        """A progress report's reply says whether the job was cancelled (as heartbeats do, sooner)."""
        if getattr(reply, "job_cancelled", False):
            self._cancelled.set()

    def _idle(self, previous):
        step = previous + 1
        self._check()
        pushes = {b: ([], 0.0, None) for b in self.layout.block_ids}
        pending = {b: self._push(b, step, *p) for b, p in pushes.items()}
        pull = self.client.pull_async(self.job.job_id, step)
        self._await(pending, pushes, step)
        self._load(self._result(pull, step))
        self.idle_steps += 1
        return step

    def _push(self, block_id, step, values, weight, mark):
        return self.client.push_async(self.job.job_id, block_id, self.id, step, step - 1, self.membership, weight,
                                      values, self.generation, mark)

    def _await(self, pending, pushes, step):
        """Waits for the step's pushes; one that timed out is sent again (the block keys it by trainer and step)."""
        deadline = time.monotonic() + self.patience
        for block, p in pending.items():
            while True:
                try:
                    reply = p.result()
                    break
                except ShardTrainError as e:
                    # A sync push is answered once every trainer pushed the step: a slow one is no error of this one.
                    if e.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                        raise
                    self._check()
                    self.log(f"trainer {self.id}: push of step {step} to {block}: {e.message}; sending it again")
                    p = self._push(block, step, *pushes[block])
            if reply.outcome == reply.ROLLED_BACK:
                raise _Rejoin(f"its push of step {step} belongs to a generation the job rolled back")

    def _result(self, pull, step):
        """The pull's values at version `step`, pulled again while the blocks are slow to get there."""
        deadline = time.monotonic() + self.patience
        while True:
            try:
                return pull.result()
            except ShardTrainError as e:
                if e.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
                self._check()
                self.log(f"trainer {self.id}: pull of version {step}: {e.message}; pulling again")
                pull = self.client.pull_async(self.job.job_id, step)

    def pull_latest(self):
        """Pulls every block's latest values into the model; the oldest block's version."""
        return self._pull(0)[0]

    def _pull(self, min_version):
        return self._load(self.client.pull(self.job.job_id, min_version))

    def _load(self, values):
        """Writes pulled values into the model; the oldest and newest block's version."""
        for v in values.values():
            self.layout.write(self.model.params, v)
        self.model.loaded()
        versions = [v.version for v in values.values()]
        self.version = min(versions)
        return min(versions), max(versions)

    def _leave(self, why, step):
        self.client.leave(self.id, self.job_id)
        t = self.times
        self.log(f"trainer {self.id} finished ({why}): {self.steps} steps with data, {self.idle_steps} without, "
                 f"last step {step}; per step with data: compute and send {1000 * t['compute'] / max(1, self.steps):.1f} ms, "
                 f"wait for pushes {1000 * t['push'] / max(1, self.steps):.1f} ms, "
                 f"pull {1000 * t['pull'] / max(1, self.steps):.1f} ms")
        return step

    # ---- liveness ----

    def _heartbeats(self):
        while not self._stop.wait(self.heartbeat_s):
            try:
                reply = self.client.heartbeat_reply(self.id, self.job_id)
                self._rollbacks.extend(reply.rollbacks)
                if reply.job_cancelled:
                    self._cancelled.set()
            except ShardTrainError as e:
                if e.code != grpc.StatusCode.UNAVAILABLE:
                    self._failure = e
                    return

    def _check(self):
        if self._failure is not None:
            raise self._failure
        if self._rollbacks:
            r = self._rollbacks[-1]
            raise _Rejoin(f"the job rolled back to step {r.step} (generation {r.generation})")


def default_trainer_id():
    return f"python-{os.uname().nodename}-{os.getpid()}"
