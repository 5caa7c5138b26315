"""DDP's stock communication hooks: plain all-reduce, and all-reduce in half precision.

A hook is called as hook(state, bucket) when a bucket of gradients is ready and returns a Future of
the bucket's reduced gradients; the bucket's buffer holds the local gradients, not yet averaged.
"""
from ... import distributed_c10d as _c10d
from ....futures import Future
from ...._tensor import Tensor
from .... import _C


def _allreduce_fut(process_group, tensor) -> Future[Tensor]:
    """Averages `tensor` over the group in place; a future of it."""
    group = process_group if process_group is not None else _c10d._get_default_group()
    tensor.div_(group.size())
    return (_c10d.all_reduce(tensor, group=process_group, async_op=True).get_future()
            .then(lambda fut: fut.value()[0]))


def allreduce_hook(process_group, bucket) -> Future[Tensor]:
    """What DDP does without a hook: the gradients averaged with one all-reduce."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else _c10d._get_default_group()
    buffer = bucket.buffer()
    compressed = buffer.to(dtype)
    compressed.div_(group.size())
    fut = _c10d.all_reduce(compressed, group=process_group, async_op=True).get_future()

    def decompress(fut):
        buffer.copy_(fut.value()[0])  # back into the bucket, in its own dtype
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket) -> Future[Tensor]:
    """Gradients cast to float16, divided by the world size and all-reduced: half the bytes on the wire."""
    return _compress_hook(_C.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket) -> Future[Tensor]:
    """As fp16_compress_hook, in bfloat16 (float32's range, fewer mantissa bits)."""
    return _compress_hook(_C.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket) -> Future[Tensor]:
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """Wraps another hook so it communicates the bucket in float16 and the result comes back in the
    gradients' dtype."""
    return _compress_wrapper(_C.float16, hook)


def bf16_compress_wrapper(hook):
    """As fp16_compress_wrapper, in bfloat16."""
    return _compress_wrapper(_C.bfloat16, hook)
