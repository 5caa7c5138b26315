"""PowerSGD gradient compression for DDP (Vogels et al., NeurIPS 2019), torch's hooks and state.

Each gradient matrix M (n x m, a tensor viewed as (shape[0], -1)) travels as two thin factors:
P = M Q (n x r) is all-reduced and orthogonalized, then Q = M^T P (m x r) is all-reduced, and the
bucket receives P Q^T / world_size. Q is kept from step to step (warm start: one power iteration
per step), and what the approximation dropped is added to the next step's gradient (error
feedback). Tensors too small to gain (`min_compression_rate`) and vectors are all-reduced as they
are. Until `start_powerSGD_iter` the hooks all-reduce plainly.
"""
import logging
import math
from collections import defaultdict

import numpy as np

from ... import distributed_c10d as _c10d
from .... import _C
from ...._C._ops import bmm, cat, empty, matmul, randn, stack, zeros
from ....linalg import qr as _qr
from ...._tensor import Tensor
from ....futures import Future
from . import default_hooks

__all__ = ["PowerSGDState", "powerSGD_hook", "batched_powerSGD_hook"]

logger = logging.getLogger(__name__)


def _orthogonalize(matrices, epsilon=0):
    """Orthonormal columns, in place, for a batch (b, n, r) with r <= n: Gram-Schmidt for ranks up to 2
    and half precisions, QR otherwise."""
    if matrices.dim() != 3 or matrices.shape[2] > matrices.shape[1]:
        raise AssertionError(f"_orthogonalize expects (batch, n, r) with r <= n, got {tuple(matrices.shape)}")
    rank = matrices.shape[2]
    if rank <= 2 or matrices.dtype in (_C.float16, _C.bfloat16):
        _gram_schmidt(matrices, epsilon)
    else:
        q, _ = _qr(matrices)
        matrices.copy_(q)


def _gram_schmidt(matrices, epsilon=0):
    """Columns normalized one by one, each removed from the ones after it. A zero column with
    epsilon=0 gives NaN (set epsilon, e.g. 1e-8, where columns may vanish)."""
    cols = matrices.shape[2]
    for i in range(cols):
        col = matrices[:, :, i:i + 1]
        norm = col.norm(dim=1, keepdim=True)
        col.div_(norm + epsilon if epsilon else norm)
        if i + 1 < cols:
            rest = matrices[:, :, i + 1:]
            rest.sub_((col * rest).sum(dim=1, keepdim=True) * col)


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    """(worth compressing, elements before, elements after): worth it when the factors are smaller
    than the matrix by more than min_compression_rate."""
    before = num_rows * num_cols
    after = (num_rows + num_cols) * matrix_approximation_rank
    return after * min_compression_rate < before, before, after


def _report_compression_stats(bucket, state):
    if bucket.is_last() and state.iter >= state.next_stats_report:
        rate, before, after = state.compression_stats()
        logger.info("Compression stats: iter %s, total before compression %s, total after compression %s, rate %s",
                    state.iter, before, after, rate)
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


class PowerSGDState:
    """The hooks' hyperparameters and per-bucket memory (errors, P and Q), torch's PowerSGDState.

    matrix_approximation_rank: r, the factors' width (1-4 typical). start_powerSGD_iter: plain
    all-reduce before this many iterations (must exceed 1 with error feedback or warm start).
    min_compression_rate: compress a tensor only when (n + m) r times this is below n m.
    orthogonalization_epsilon: added to column norms (guards all-zero columns). random_seed seeds the
    initial Q. batch_tensors_with_same_shape: compress same-shaped gradients in one batched product.
    """
    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter", "min_compression_rate",
                 "orthogonalization_epsilon", "use_error_feedback", "warm_start", "batch_tensors_with_same_shape",
                 "rng", "error_dict", "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency", "next_stats_report",
                 "_pending"]

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000, min_compression_rate=2,
                 use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape: bool = False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                             "because PowerSGD can only be applied after the first two iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)  # draws the seeds of the initial Qs
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape
        self._pending = []  # buckets of this backward whose second round has not finished (_Bucket)

    def __getstate__(self):
        """Everything but the process group (not picklable; the default group is used after loading)."""
        return {slot: getattr(self, slot) for slot in self.__slots__ if slot not in ("process_group", "_pending")}

    def __setstate__(self, state):
        self.process_group = _c10d._get_default_group()
        logger.warning("NOTE: Process group is not serializable and excluded from a saved state object. Process "
                       "group will be set to a default group (i.e. the world size). If a different group is desired, "
                       "please set `self.process_group` after PowerSGD state is loaded.")
        for slot, value in state.items():
            setattr(self, slot, value)
        self._pending = []

    def maybe_increase_iter(self, bucket):
        """One more iteration once the last bucket of a backward has been handled."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self):
        """(compression rate, elements before compression, elements after), over all steps so far."""
        rate = (self.total_numel_before_compression / self.total_numel_after_compression
                if self.total_numel_after_compression > 0 else 0)
        return rate, self.total_numel_before_compression, self.total_numel_after_compression


def _begin(state, bucket):
    """(group, its size, the bucket's buffer, a plain all-reduce's future while still warming up, else None)."""
    group = state.process_group if state.process_group is not None else _c10d._get_default_group()
    buffer = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return group, group.size(), buffer, default_hooks._allreduce_fut(group, buffer)
    return group, group.size(), buffer, None


def _add_error(state, index, t):
    """Error feedback: last step's approximation error of bucket `index` added into `t` (a zero error on its
    first step); a copy of the result, to measure this step's error against. None without error feedback."""
    if not state.use_error_feedback:
        return None
    if index in state.error_dict:
        t.add_(state.error_dict[index])
    else:
        state.error_dict[index] = zeros(t.shape[0], dtype=t.dtype, device=t.device)
    return t.detach().clone()


def _end_step(state, bucket, index, before, approximated):
    """After a bucket's approximation: keep its error, drop the factors without warm start, count the step."""
    if state.use_error_feedback:
        state.error_dict[index] = before - approximated
    if not state.warm_start:
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
    state.maybe_increase_iter(bucket)


class _Bucket:
    """One bucket's second round: start() issues the Q all-reduce (after the first round's P), finish()
    waits for it and writes the bucket. Every rank starts them in bucket order, at the next bucket's
    hook or when DDP waits, never from a future's callback: those run on the process group's thread,
    in an order that depends on timing (torch's hooks do, and on Gloo their collectives can mismatch)."""
    __slots__ = ("start", "finish", "work")

    def __init__(self, start, finish):
        self.start, self.finish, self.work = start, finish, None


def _start_pending(state):
    for b in state._pending:
        if b.work is None:
            b.work = b.start()


def _second_round(state, start, finish):
    """Queue a bucket's second round; its future's value comes when DDP waits for it."""
    bucket = _Bucket(start, finish)
    state._pending.append(bucket)
    fut = Future()

    def pull():
        if fut.done():
            return
        try:
            _start_pending(state)
            bucket.work.wait()
            value = bucket.finish()
        except Exception as e:  # noqa: BLE001 - waiters get it
            state._pending.clear()
            fut.set_exception(e)
        else:
            state._pending.remove(bucket)
            fut.set_result(value)
    fut._pull = pull
    return fut


def _seeded_randn(state, shapes, dtype):
    """Normal samples of each shape, from a seed the state's numpy generator draws (the same on every
    rank), leaving the global generator as it was."""
    from .... import random as _random
    with _random.fork_rng(devices=[]):
        _random.manual_seed(int(state.rng.randint(1_000_000_000)))
        return [randn(*shape, dtype=dtype) for shape in shapes]


def powerSGD_hook(state: PowerSGDState, bucket) -> Future[Tensor]:
    """Compress each gradient matrix of the bucket to rank r (per tensor), all-reduce the factors
    and the uncompressed rest; register with ddp.register_comm_hook(state, powerSGD_hook)."""
    group, world_size, buffer, plain = _begin(state, bucket)
    if plain is not None:
        return plain

    dtype, index = buffer.dtype, bucket.index()
    before = _add_error(state, index, buffer)

    # split the bucket's gradients (views of its buffer) into matrices worth compressing and the rest
    to_compress, uncompressed = [], []
    p_total = q_total = 0
    for grad in bucket.gradients():
        matrix = grad.view(grad.shape[0] if grad.dim() else 1, -1)
        n, m = matrix.shape
        r = min(n, m, state.matrix_approximation_rank)
        worth, numel_before, numel_after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += numel_before
        if worth:
            to_compress.append(matrix)
            p_total += n * r
            q_total += m * r
            state.total_numel_after_compression += numel_after
        else:
            uncompressed.append(grad)
            state.total_numel_after_compression += numel_before
    _report_compression_stats(bucket, state)
    flat_rest = (cat([g.reshape(-1) for g in uncompressed]) if uncompressed
                 else zeros(0, dtype=dtype, device=buffer.device))

    fresh = not state.warm_start or index not in state.p_memory_dict
    if fresh:
        state.p_memory_dict[index] = empty(p_total, dtype=dtype, device=buffer.device)
        state.q_memory_dict[index] = empty(q_total, dtype=dtype, device=buffer.device)

    # same-shaped matrices go together when batching is asked for; each batch gets its slices of P and Q
    by_shape = defaultdict(list)
    for matrix in to_compress:
        by_shape[tuple(matrix.shape)].append(matrix)
    batches = []
    for group_of_same in by_shape.values():
        if state.batch_tensors_with_same_shape and len(group_of_same) > 1:
            batches.append(stack(group_of_same))
        else:
            batches.extend(mat.unsqueeze(0) for mat in group_of_same)
    ps, qs = [], []
    p_at = q_at = 0
    for batch in batches:
        b, n, m = batch.shape
        r = min(n, m, state.matrix_approximation_rank)
        ps.append(state.p_memory_dict[index][p_at:p_at + b * n * r].view(b, n, r))
        qs.append(state.q_memory_dict[index][q_at:q_at + b * m * r].view(b, m, r))
        p_at += b * n * r
        q_at += b * m * r

    if fresh:
        for q, values in zip(qs, _seeded_randn(state, [q.shape for q in qs], dtype)):
            q.copy_(values)
    for q in qs:
        _orthogonalize(q, state.orthogonalization_epsilon)
    for batch, q, p in zip(batches, qs, ps):
        bmm(batch, q, out=p)

    # the previous buckets' second rounds, then this one's first: the uncompressed rest and P = M Q
    _start_pending(state)
    rest_work = _c10d.all_reduce(flat_rest, group=group, async_op=True)
    p_work = _c10d.all_reduce(state.p_memory_dict[index], group=group, async_op=True)

    def start_q():
        p_work.wait()
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for batch, p, q in zip(batches, ps, qs):
            bmm(batch.transpose(1, 2), p, out=q)
        return _c10d.all_reduce(state.q_memory_dict[index], group=group, async_op=True)  # Q = M^T P

    def finish():
        rest_work.wait()
        flat_rest.div_(world_size)
        at = 0
        for g in uncompressed:
            g.copy_(flat_rest[at:at + g.numel()].view_as(g))
            at += g.numel()
        state.q_memory_dict[index].div_(world_size)
        for p, q, batch in zip(ps, qs, batches):
            bmm(p, q.transpose(1, 2), out=batch)
        if state.batch_tensors_with_same_shape:
            for batch in batches:
                if batch.shape[0] > 1:  # a stacked copy: its matrices back into the bucket's views
                    for i, original in enumerate(by_shape[tuple(batch.shape[1:])]):
                        original.copy_(batch[i])
        _end_step(state, bucket, index, before, buffer)
        return buffer

    return _second_round(state, start_q, finish)


def batched_powerSGD_hook(state: PowerSGDState, bucket) -> Future[Tensor]:
    """Compress the whole bucket at once: its buffer, zero-padded to a square matrix, to rank r.
    Faster than powerSGD_hook, at a lower accuracy for the same rank."""
    group, world_size, buffer, plain = _begin(state, bucket)
    if plain is not None:
        return plain

    length = buffer.shape[0]
    side = math.ceil(math.sqrt(length))
    r = min(state.matrix_approximation_rank, side)  # a rank beyond the side would not be a low-rank factor
    state.total_numel_before_compression += length
    state.total_numel_after_compression += side * r * 2
    # the padded square in a buffer of its own; the bucket's values come back into `buffer` at the end
    square = zeros(side * side, dtype=buffer.dtype, device=buffer.device)
    square[:length].copy_(buffer)
    _report_compression_stats(bucket, state)

    index = bucket.index()
    before = _add_error(state, index, square)
    matrix = square.view(side, side)

    if not state.warm_start or index not in state.p_memory_dict:
        state.p_memory_dict[index] = empty(side, r, dtype=buffer.dtype, device=buffer.device)
        state.q_memory_dict[index] = _seeded_randn(state, [(side, r)], buffer.dtype)[0].to(buffer.device)
    p, q = state.p_memory_dict[index], state.q_memory_dict[index]
    _orthogonalize(q.unsqueeze(0), state.orthogonalization_epsilon)
    matmul(matrix, q, out=p)
    _start_pending(state)
    p_work = _c10d.all_reduce(p, group=group, async_op=True)

    def start_q():
        p_work.wait()
        _orthogonalize(p.unsqueeze(0), state.orthogonalization_epsilon)
        matmul(matrix.t(), p, out=q)
        return _c10d.all_reduce(q, group=group, async_op=True)

    def finish():
        q.div_(world_size)
        matmul(p, q.t(), out=matrix)
        _end_step(state, bucket, index, before, square)
        buffer.copy_(square[:length])
        return buffer

    return _second_round(state, start_q, finish)
