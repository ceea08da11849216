import threading
import unittest

import grpc
import numpy as np

from shardtrain import shardtrain_pb2 as pb
from shardtrain.client import ShardTrainError
from shardtrain.model import NumpyMlp
from shardtrain.trainer import SyncTrainer
from shardtrain.wire import Pulled
from tests.test_model import job as mlp_job


class Done:
    def __init__(self, value=None, error=None):
        self.value, self.error = value, error

    def done(self):
        return True

    def result(self):
        if self.error:
            raise self.error
        return self.value


class OneTrainerJob:
    """The node's side of a sync job with one trainer: a wait, one task of 10 examples, one answer of no
    task while the job runs, then done; the first push of dense1.weight#0 times out."""

    def __init__(self, rollback_at=None, cancel_at=None, cancel_reported_at=None):
        # The job rolls back when the first push of this step arrives: to the checkpoint after step 1,
        # whose reader offset is 4, in generation 2.
        self.rollback_at = rollback_at
        self.generation = 1
        self.lease_offset = 0
        self.reported = 0
        self.no_task_answers = 0
        self.job = mlp_job(block_size=100)
        self.job.mode = "sync"
        self.job.batch = 4
        self.job.seed = 9
        self.leases = 0
        self.version = 0
        self.pushes = []
        self.contributed = set()
        self.reports = []
        self.left = False
        self.timed_out = False
        self.jobs_named = []  # (call, job id) of the master's calls, in order
        # The job is cancelled when the first push of this step arrives, which waits for a heartbeat to say so.
        self.cancel_at = cancel_at
        self.cancelled = False
        self.cancel_heard = threading.Event()
        # Or the reply to the report of this step says the job was cancelled.
        self.cancel_reported_at = cancel_reported_at

    def register(self, trainer_id, job_id=""):
        self.registrations = getattr(self, "registrations", 0) + 1
        self.jobs_named.append(("register", job_id))
        return pb.RegisterTrainerReply(job=self.job, membership_epoch=3, generation=self.generation)

    def heartbeat_reply(self, trainer_id, job_id=""):
        if self.cancelled:
            self.cancel_heard.set()
        return pb.HeartbeatReply(job_cancelled=self.cancelled)

    def lease(self, trainer_id, job_id=""):
        self.jobs_named.append(("lease", job_id))
        self.leases += 1
        if self.leases == 1:
            return pb.LeaseTaskReply(wait=pb.WaitForTrainers(registered=0, expected=1))
        if self.reported < 10:
            return pb.LeaseTaskReply(lease=pb.Lease(epoch=0, task=0, to=10, offset=self.lease_offset))
        self.no_task_answers += 1
        return pb.LeaseTaskReply(no_task=pb.NoTask(job_done=self.no_task_answers > 1))

    def push_async(self, job_id, block_id, trainer_id, step, base_version, membership_epoch, weight, values,
                   generation, mark=None):
        if block_id == "dense1.weight#0" and not self.timed_out:
            self.timed_out = True
            return Done(error=ShardTrainError("PushGradient", grpc.StatusCode.UNAVAILABLE, "no answer in 10 s"))
        if generation < self.generation:
            return Done(pb.PushReply(outcome=pb.PushReply.ROLLED_BACK, version=self.version))
        if step == self.cancel_at and not self.cancelled:
            self.cancelled = True
            assert self.cancel_heard.wait(10), "no heartbeat after the cancel"
        if step == self.rollback_at:
            self.rollback_at = None
            self.generation, self.version, self.lease_offset, self.contributed = 2, 1, 4, set()
            return Done(pb.PushReply(outcome=pb.PushReply.ROLLED_BACK, version=self.version))
        assert step == self.version + 1 and base_version == self.version, (step, self.version)
        self.pushes.append((block_id, step, membership_epoch, weight, len(values), generation, mark))
        self.contributed.add(block_id)
        if self.contributed == {b.block_id for b in self.job.blocks}:
            self.version += 1
            self.contributed = set()
        return Done(pb.PushReply(outcome=pb.PushReply.APPLIED, version=self.version))

    def pull_async(self, job_id, min_version):
        job = self

        class Pull:
            def result(self):
                assert job.version >= min_version, (job.version, min_version)
                return {b.block_id: Pulled(pb.BlockValues(block_id=b.block_id, parameter=b.parameter, offset=b.offset,
                                                          version=job.version), np.full(b.length, 0.5, np.float32))
                        for b in job.job.blocks}
        return Pull()

    def pull(self, job_id, min_version):
        return self.pull_async(job_id, min_version).result()

    def report_async(self, trainer_id, epoch, task, steps, generation, job_id=""):
        self.jobs_named.append(("report", job_id))
        if generation < self.generation:
            return Done(error=ShardTrainError("ReportProgress", grpc.StatusCode.FAILED_PRECONDITION, "rolled back"))
        self.reports.append((epoch, task, list(steps), generation))
        self.reported = steps[-1][1]
        cancelled = self.cancel_reported_at is not None and steps[-1][0] >= self.cancel_reported_at
        return Done(pb.ReportProgressReply(job_cancelled=cancelled))

    def report(self, *args):
        return self.report_async(*args).result()

    def leave(self, trainer_id, job_id=""):
        self.jobs_named.append(("leave", job_id))
        self.left = True


class SyncTrainerTest(unittest.TestCase):
    def test_a_task_then_a_step_without_data_then_done(self):
        node = OneTrainerJob()
        x = np.random.default_rng(1).random((10, 5), dtype=np.float32)
        y = np.arange(10) % 3
        trainer = SyncTrainer(node, "py", NumpyMlp, x, y, log=lambda line: None, heartbeat_s=60)
        self.assertEqual(4, trainer.run())
        self.assertEqual((3, 1, 4), (trainer.steps, trainer.idle_steps, node.version))
        self.assertTrue(node.left)
        self.assertEqual(0.5, float(trainer.model.params["dense1.weight"][4, 3]))
        by_step = {}
        for block, step, epoch, weight, length, generation, mark in node.pushes:
            by_step.setdefault(step, set()).add((weight, length > 0, mark))
            self.assertEqual((3, 1), (epoch, generation))
        # Batches of 4, 4 and 2 examples, each push marked with the reader offset after it; then nothing.
        self.assertEqual({1: {(4.0, True, (0, 0, 4))}, 2: {(4.0, True, (0, 0, 8))}, 3: {(2.0, True, (0, 0, 10))},
                          4: {(0.0, False, None)}}, by_step)
        # The push that timed out was sent again: every block has each step once.
        self.assertEqual(4 * len(node.job.blocks), len(node.pushes))
        self.assertEqual([(1, 4), (2, 8), (3, 10)], [s for r in node.reports for s in r[2]])
        self.assertTrue(all(r[:2] == (0, 0) and r[3] == 1 for r in node.reports))
        # Registered without a job, every later call names the job it joined.
        self.assertEqual(("register", ""), node.jobs_named[0])
        self.assertEqual({node.job.job_id}, {job for _, job in node.jobs_named[1:]})
        self.assertEqual("leave", node.jobs_named[-1][0])

    def test_after_a_rollback_it_registers_again_and_resumes_the_task_at_the_checkpoints_offset(self):
        node = OneTrainerJob(rollback_at=3)
        x = np.random.default_rng(1).random((10, 5), dtype=np.float32)
        trainer = SyncTrainer(node, "py", NumpyMlp, x, np.arange(10) % 3, log=lambda line: None, heartbeat_s=60)
        self.assertEqual(4, trainer.run())
        self.assertEqual(2, node.registrations)
        self.assertEqual(2, trainer.generation)
        marks = sorted({(generation, step, mark) for _, step, _, _, _, generation, mark in node.pushes})
        # Steps 1 and 2 in generation 1; step 3 rolled back to the checkpoint after step 1 (offset 4):
        # steps 2 and 3 again on the task's examples from offset 4, then a step without data.
        self.assertEqual([(1, 1, (0, 0, 4)), (1, 2, (0, 0, 8)), (2, 2, (0, 0, 8)), (2, 3, (0, 0, 10)), (2, 4, None)],
                         marks)
        self.assertEqual([(2, 8), (3, 10)], [s for r in node.reports if r[3] == 2 for s in r[2]])

    def test_a_cancelled_job_is_left_after_the_step_in_progress_is_reported(self):
        node = OneTrainerJob(cancel_at=2)
        x = np.random.default_rng(1).random((10, 5), dtype=np.float32)
        trainer = SyncTrainer(node, "py", NumpyMlp, x, np.arange(10) % 3, log=lambda line: None, heartbeat_s=0.01)
        self.assertEqual(2, trainer.run())
        self.assertTrue(node.left)
        # Steps 1 and 2 of the task's 3 pushed and reported; no lease after the cancel.
        self.assertEqual([1, 2], sorted({step for _, step, *_ in node.pushes}))
        self.assertEqual([(1, 4), (2, 8)], [s for r in node.reports for s in r[2]])
        calls = [call for call, _ in node.jobs_named if call != "report"]
        self.assertEqual(["register", "lease", "lease", "leave"], calls)

    def test_a_progress_reports_reply_that_says_cancelled_ends_the_task_after_the_next_step(self):
        node = OneTrainerJob(cancel_reported_at=1)
        x = np.random.default_rng(1).random((10, 5), dtype=np.float32)
        trainer = SyncTrainer(node, "py", NumpyMlp, x, np.arange(10) % 3, log=lambda line: None, heartbeat_s=60)
        self.assertEqual(2, trainer.run())
        self.assertTrue(node.left)
        self.assertEqual([(1, 4), (2, 8)], [s for r in node.reports for s in r[2]])

    def test_an_async_job_is_refused_naming_its_mode(self):
        node = OneTrainerJob()
        node.job.mode = "async"
        trainer = SyncTrainer(node, "py", NumpyMlp, np.zeros((1, 5), np.float32), np.zeros(1, int),
                              log=lambda line: None, heartbeat_s=60)
        with self.assertRaisesRegex(ValueError, "runs in async mode; this trainer takes part in sync jobs only"):
            trainer.run()
