"""ForkingPickler reducers: a tensor pickles as a handle to its storage in shared memory (moved
there first if needed) plus its geometry; unpickling maps the same memory in the receiver."""
import os
import threading
import weakref
from multiprocessing import reduction, resource_tracker

from .. import _C
from .._conj import _stored, _with_bits
from .. import _tensor
from .._tensor import Tensor
from ..nn.parameter import Parameter
from ..sparse import _from_parts

_strategy = ["file_descriptor"]  # mutable cell: set_sharing_strategy writes it


_tracker_connected_in = [None]  # the pid that last connected (a fork()ed child inherits the fd)


def _fresh_tracker_lock_in_child():
    # fork() copies Python's resource-tracker lock as it was, held if another thread of the parent was
    # inside ensure_running() at that moment: the child, which has one thread, would wait on it forever
    # (seen as a DataLoader worker hanging in share_memory_). The child starts with an unheld lock.
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is not None and hasattr(tracker, "_lock"):
        tracker._lock = threading.RLock()


os.register_at_fork(after_in_child=_fresh_tracker_lock_in_child)


def _connect_tracker():
    # named segments are reported to Python's resource_tracker, which unlinks the ones whose
    # processes died holding them once every process of the tree has exited
    if _tracker_connected_in[0] != os.getpid():
        resource_tracker.ensure_running()
        _C._shm_set_tracker_fd(resource_tracker._resource_tracker._fd)
        _tracker_connected_in[0] = os.getpid()


def share_memory_(t, strategy=None):
    """Move the storage of `t` into shared memory (in place, a no-op if it is already there)."""
    if t.is_sparse:
        raise NotImplementedError("share_memory_: a sparse COO tensor has no storage of its own; its indices and "
                                  "values are shared when it is sent to another process")
    if _C._shm_strategy_of(t) is None:
        strategy = strategy or _strategy[0]
        if strategy == "file_system":
            _connect_tracker()
        _C._shm_share(t, strategy)
    return t


def _finish(t, cls, requires_grad):
    if cls is not None:  # an nn.Parameter
        return cls(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


# storages this process has mapped, by segment identity -> a live tensor on it: a storage received
# again (or twice in one message, as a tensor and its view) maps once and its tensors stay aliased
_mapped = weakref.WeakValueDictionary()
_mapped_lock = threading.Lock()


def _fd_key(fd):
    st = os.fstat(fd)
    return ("fd", st.st_dev, st.st_ino)


def _key_of(t):
    strategy = _C._shm_strategy_of(t)
    if strategy == "file_descriptor":
        return _fd_key(_C._shm_fd(t))
    return ("file", _C._shm_name(t)) if strategy == "file_system" else None


def _cached_view(key, dtype, size, stride, offset):
    base = _mapped.get(key)
    if base is None or _key_of(base) != key:  # gone, or given other memory since (`t.data = ...`)
        return None
    return _C._shm_view_like(base, dtype, list(size), list(stride), offset)


def _rebuild_from_fd(dup_fd, nbytes, dtype, size, stride, offset, cls, requires_grad):
    fd = dup_fd.detach()
    try:
        key = _fd_key(fd)
        with _mapped_lock:
            t = _cached_view(key, dtype, size, stride, offset)
            if t is None:
                t = _C._shm_rebuild_fd(fd, nbytes, dtype, list(size), list(stride), offset)
                _mapped[key] = t = _finish(t, cls, requires_grad)
                return t
    finally:
        os.close(fd)
    return _finish(t, cls, requires_grad)


def _rebuild_from_file(name, nbytes, dtype, size, stride, offset, cls, requires_grad):
    _connect_tracker()
    key = ("file", name)
    with _mapped_lock:
        t = _cached_view(key, dtype, size, stride, offset)
        if t is None:
            t = _C._shm_rebuild_file(name, nbytes, True, dtype, list(size), list(stride), offset)
            _mapped[key] = t = _finish(t, cls, requires_grad)
            return t
        _C._shm_release_ref(name)  # already mapped here: the sender's extra reference is not needed
    return _finish(t, cls, requires_grad)


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if t.is_sparse:  # its indices and values travel as tensors of their own (shared memory)
        return _from_parts, (t._indices(), t._values(), tuple(t.shape), t.is_coalesced())
    if t.is_conj() or t.is_neg():  # the storage's alias travels, and the bits beside it
        return _with_bits, (_stored(t), t.is_conj(), t.is_neg())
    share_memory_(t)
    geometry = (t._storage_nbytes(), t.dtype, tuple(t.shape), tuple(t.stride()), t.storage_offset(),
                type(t) if isinstance(t, Parameter) else None, bool(t.requires_grad))
    key = _key_of(t)
    with _mapped_lock:  # a tensor sent away and sent back arrives on the original memory
        base = _mapped.get(key)
        if base is None or _key_of(base) != key:
            _mapped[key] = t
    if key[0] == "fd":
        return _rebuild_from_fd, (reduction.DupFd(_C._shm_fd(t)),) + geometry
    name = key[1]
    # the receiver adopts this reference, so the segment outlives a sender that drops `t` first
    _C._shm_add_ref(t)
    return _rebuild_from_file, (name,) + geometry


def init_reductions():
    # Tensor.share_memory_ is installed from here: the Tensor layer does not import this one
    _tensor._install_layer_hook("share_memory", share_memory_)
    for cls in (_C.TensorBase, Tensor, Parameter):
        reduction.ForkingPickler.register(cls, reduce_tensor)
