"""torch.distributed's low-level process-group API: the option objects (AllreduceOptions, ...), the
list-and-options forms of a group's own methods (pg.allreduce([t], opts).wait()) and ProcessGroupGloo,
a Gloo group made directly from a store.

Ember's C++ groups take one tensor per call (pg.allreduce(t, op)); torch's backends take a list (one
tensor per local device, a single one on CPU) and an options object. The methods installed here on
ember's ProcessGroup accept both, so code written against either works on the groups that
init_process_group and new_group make; the C++ methods stay reachable as pg._cpp_<name>.
"""
import datetime
import socket
import time

from .. import _C
from .._tensor import Tensor as _Tensor

_D = _C._distributed
ReduceOp = _D.ReduceOp
ProcessGroup = _D.ProcessGroup

_MODULE = "ember.distributed.distributed_c10d"  # where torch's classes say they live
_UNSET_TIMEOUT = datetime.timedelta(milliseconds=-1)  # torch's kUnsetTimeout: the group's own
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


# ------------------------------------------------------------------ option objects
def _as_bool(v):
    return bool(v)


def _as_int(v):
    if isinstance(v, float):
        raise TypeError(f"expected an int, got {v!r}")
    return int(v)


def _as_timedelta(v):
    if not isinstance(v, datetime.timedelta):
        raise TypeError(f"expected a datetime.timedelta, got {type(v).__name__}")
    return v


def _as_reduce_op(v):
    if not isinstance(v, ReduceOp):
        raise TypeError(f"expected an ember.distributed.ReduceOp, got {type(v).__name__}")
    return v


def _as_int_list(v):
    return [int(x) for x in v]


def _as_device(v):
    return v if v is None else _C.device(v) if isinstance(v, str) else v


class _Options:
    """Fields with torch's names and defaults; assigning converts (or raises TypeError), unknown names
    raise AttributeError, as on torch's pybind11 option classes."""
    __slots__ = ()
    _fields = {}  # name -> (converter, default factory)

    def __init__(self):
        for name, (_, default) in self._fields.items():
            object.__setattr__(self, name, default())

    def __setattr__(self, name, value):
        field = self._fields.get(name)
        if field is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        try:
            value = field[0](value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{type(self).__name__}.{name}: {e}") from None
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._fields)})"


def _options_class(name, doc, **fields):
    """An _Options subclass with `fields` (name -> (converter, default factory)) plus timeout and asyncOp."""
    fields = dict(fields, timeout=(_as_timedelta, lambda: _UNSET_TIMEOUT), asyncOp=(_as_bool, lambda: True))
    cls = type(name, (_Options,), {"__slots__": tuple(fields), "_fields": fields, "__doc__": doc,
                                   "__module__": _MODULE})
    return cls


_op = (_as_reduce_op, lambda: ReduceOp.SUM)
_root = (_as_int, lambda: 0)

AllreduceOptions = _options_class(
    "AllreduceOptions", "Options of a group's allreduce: reduceOp, timeout (unset: the group's), asyncOp.",
    reduceOp=_op)
AllreduceCoalescedOptions = _options_class(
    "AllreduceCoalescedOptions", "Options of a group's allreduce_coalesced: reduceOp, timeout, asyncOp.",
    reduceOp=_op)
BroadcastOptions = _options_class(
    "BroadcastOptions", "Options of a group's broadcast: rootRank, rootTensor (index in the list), timeout, "
    "asyncOp.", rootRank=_root, rootTensor=_root)
ReduceOptions = _options_class(
    "ReduceOptions", "Options of a group's reduce: reduceOp, rootRank, rootTensor, timeout, asyncOp.",
    reduceOp=_op, rootRank=_root, rootTensor=_root)
AllgatherOptions = _options_class(
    "AllgatherOptions", "Options of a group's allgather and its variants: timeout, asyncOp.")
GatherOptions = _options_class(
    "GatherOptions", "Options of a group's gather: rootRank, timeout, asyncOp.", rootRank=_root)
ScatterOptions = _options_class(
    "ScatterOptions", "Options of a group's scatter: rootRank, timeout, asyncOp.", rootRank=_root)
ReduceScatterOptions = _options_class(
    "ReduceScatterOptions", "Options of a group's reduce_scatter and its variants: reduceOp, timeout, asyncOp.",
    reduceOp=_op)
AllToAllOptions = _options_class(
    "AllToAllOptions", "Options of a group's alltoall and alltoall_base: timeout, asyncOp.")
BarrierOptions = _options_class(
    "BarrierOptions", "Options of a group's barrier: device_ids, device (accelerator ranks only), timeout, "
    "asyncOp.", device_ids=(_as_int_list, list), device=(_as_device, lambda: None))


# ------------------------------------------------------------------ works with an options timeout
class _TimedWork:
    """A Work whose wait() gives up (DistBackendError) once the options' timeout has passed since the
    operation was issued; the operation itself still runs under the group's own timeout."""
    __slots__ = ("_work", "_deadline", "_timeout")

    def __init__(self, work, timeout):
        self._work, self._timeout = work, timeout
        self._deadline = time.monotonic() + timeout.total_seconds()

    def wait(self, timeout=None):
        """Blocks until done, at most until the options' timeout (or `timeout`, when given)."""
        if timeout is None:
            left = self._deadline - time.monotonic()
            timeout = datetime.timedelta(seconds=max(left, 0.001))
        return self._work.wait(timeout)

    def __getattr__(self, name):
        return getattr(self._work, name)

    def __repr__(self):
        return f"<Work with timeout {self._timeout} {self._work!r}>"


def _timeout_of(opts):
    t = opts.timeout
    return None if t < datetime.timedelta(0) else t


def _timed(work, timeout):
    return work if timeout is None or timeout < datetime.timedelta(0) else _TimedWork(work, timeout)


# ------------------------------------------------------------------ argument checks
def _label(pg):
    return {"gloo": "ProcessGroupGloo", "nccl": "ProcessGroupNCCL"}.get(pg.name(), "ProcessGroup")


def _opts(pg, opts, cls, op):
    if opts is None:
        return cls()
    if not isinstance(opts, cls):
        raise TypeError(f"{_label(pg)}::{op}: expected {cls.__name__}, got {type(opts).__name__}")
    return opts


def _tensor_list(pg, tensors, op):
    if isinstance(tensors, _Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{_label(pg)}::{op}: expected a list of tensors, got {type(tensors).__name__}")
    for t in tensors:
        if not isinstance(t, _Tensor):
            raise TypeError(f"{_label(pg)}::{op}: expected a list of tensors, got an element of type "
                            f"{type(t).__name__}")
    return list(tensors)


def _single(pg, tensors, op, what="tensor"):
    """The one tensor of a single-element list (torch's CPU backends take one tensor per call)."""
    ts = _tensor_list(pg, tensors, op)
    if len(ts) != 1:
        raise RuntimeError(f"{_label(pg)}::{op}: requires a single-element {what} list")
    return ts[0]


def _check_root(pg, root, op):
    if not 0 <= root < pg.size():
        raise RuntimeError(f"{_label(pg)}::{op}: invalid root rank: {root}")


def _same_kind(pg, ts, op):
    for i, t in enumerate(ts[1:], 1):
        if t.dtype != ts[0].dtype:
            raise RuntimeError(f"{_label(pg)}::{op}: invalid tensor type at index {i} (expected {ts[0].dtype}, "
                               f"got {t.dtype})")
        if t.shape != ts[0].shape:
            raise RuntimeError(f"{_label(pg)}::{op}: invalid tensor size at index {i} (expected "
                               f"{tuple(ts[0].shape)}, got {tuple(t.shape)})")


_COMBINE = {ReduceOp.SUM: _C._ops.add, ReduceOp.AVG: _C._ops.add, ReduceOp.PRODUCT: _C._ops.mul,
            ReduceOp.MIN: _C._ops.minimum, ReduceOp.MAX: _C._ops.maximum, ReduceOp.BAND: _C._ops.bitwise_and,
            ReduceOp.BOR: _C._ops.bitwise_or, ReduceOp.BXOR: _C._ops.bitwise_xor}


def _combine(ts, op):
    """The local tensors reduced into one (a list of several tensors is reduced as if each were a rank)."""
    acc = ts[0].clone()
    for t in ts[1:]:
        acc = _COMBINE[op](acc, t)
    if op == ReduceOp.AVG:
        acc = acc / len(ts)
    return acc.to(ts[0].dtype)


# ------------------------------------------------------------------ the methods (pg: an ember ProcessGroup)
def allreduce(pg, tensors, opts=None, timeout=None, verify=True):
    """Reduce tensors across the group in place: (tensor, op=SUM) or torch's ([tensors], AllreduceOptions)."""
    if isinstance(opts, AllreduceOptions):
        op, timeout = opts.reduceOp, _timeout_of(opts)
    elif opts is None or isinstance(opts, ReduceOp):
        op = ReduceOp.SUM if opts is None else opts
    else:
        raise TypeError(f"{_label(pg)}::allreduce: expected AllreduceOptions or a ReduceOp, got {type(opts).__name__}")
    if isinstance(timeout, bool):  # ember's own third argument: allreduce(t, op, verify)
        verify, timeout = timeout, None
    if isinstance(tensors, _Tensor):
        return _timed(pg._cpp_allreduce(tensors, op, verify), timeout)
    ts = _tensor_list(pg, tensors, "allreduce")
    if not ts:
        raise RuntimeError(f"{_label(pg)}::allreduce: requires non-empty tensor list")
    if len(ts) == 1:
        return _timed(pg._cpp_allreduce(ts[0], op, verify), timeout)
    # several local tensors (torch's one-per-device form): reduced here first, the result lands in all
    _same_kind(pg, ts, "allreduce")
    local = _combine(ts, op)
    work = pg._cpp_allreduce(local, op, verify)
    work.wait(timeout)
    for t in ts:
        t.copy_(local)
    return work


def allreduce_coalesced(pg, tensors, opts=None):
    """All-reduce a list of tensors in one exchange: (tensors, AllreduceCoalescedOptions or ReduceOp)."""
    timeout = None
    if isinstance(opts, AllreduceCoalescedOptions):
        op, timeout = opts.reduceOp, _timeout_of(opts)
    elif opts is None or isinstance(opts, ReduceOp):
        op = ReduceOp.SUM if opts is None else opts
    else:
        raise TypeError(f"{_label(pg)}::allreduce_coalesced: expected AllreduceCoalescedOptions, got "
                        f"{type(opts).__name__}")
    return _timed(pg._cpp_allreduce_coalesced(_tensor_list(pg, tensors, "allreduce_coalesced"), op), timeout)


def broadcast(pg, tensors, opts=None, timeout=None):
    """Copy the root's tensor to every rank: (tensor, root) or torch's ([tensors], BroadcastOptions)."""
    if isinstance(tensors, _Tensor):
        if opts is None:
            raise TypeError(f"{_label(pg)}::broadcast(tensor, root): the root rank is required")
        if isinstance(opts, BroadcastOptions):
            opts, timeout = opts.rootRank, _timeout_of(opts)
        return _timed(pg._cpp_broadcast(tensors, opts), timeout)
    opts = _opts(pg, opts, BroadcastOptions, "broadcast")
    ts = _tensor_list(pg, tensors, "broadcast")
    if not ts:
        raise RuntimeError(f"{_label(pg)}::broadcast: requires non-empty tensor list")
    _check_root(pg, opts.rootRank, "broadcast")
    if not 0 <= opts.rootTensor < len(ts):
        raise RuntimeError(f"{_label(pg)}::broadcast: invalid root tensor: {opts.rootTensor}")
    src = ts[opts.rootTensor]
    work = pg._cpp_broadcast(src, opts.rootRank)
    if len(ts) == 1:
        return _timed(work, _timeout_of(opts))
    _same_kind(pg, ts, "broadcast")
    work.wait(_timeout_of(opts))
    for t in ts:
        if t is not src:
            t.copy_(src)
    return work


def reduce(pg, tensors, opts=None, op=ReduceOp.SUM, timeout=None):
    """Reduce onto the root rank: (tensor, root, op=SUM) or torch's ([tensor], ReduceOptions)."""
    if isinstance(tensors, _Tensor):
        if opts is None:
            raise TypeError(f"{_label(pg)}::reduce(tensor, root, op): the root rank is required")
        return _timed(pg._cpp_reduce(tensors, opts, op), timeout)
    opts = _opts(pg, opts, ReduceOptions, "reduce")
    t = _single(pg, tensors, "reduce")
    _check_root(pg, opts.rootRank, "reduce")
    if opts.rootTensor != 0:
        raise RuntimeError(f"{_label(pg)}::reduce: invalid root tensor: {opts.rootTensor}")
    return _timed(pg._cpp_reduce(t, opts.rootRank, opts.reduceOp), _timeout_of(opts))


def allgather(pg, output_tensors, input_tensors, opts=None):
    """Gather every rank's tensor: ([outputs], input) or torch's ([[outputs]], [input], AllgatherOptions)."""
    if isinstance(input_tensors, _Tensor):  # allgather(outputs, input, timeout=None)
        timeout = opts if isinstance(opts, datetime.timedelta) else None
        return _timed(pg._cpp_allgather(_tensor_list(pg, output_tensors, "allgather"), input_tensors), timeout)
    opts = _opts(pg, opts, AllgatherOptions, "allgather")
    inp = _single(pg, input_tensors, "allgather", "input tensor")
    if not isinstance(output_tensors, (list, tuple)) or len(output_tensors) != 1:
        raise RuntimeError(f"{_label(pg)}::allgather: requires a single-element output list (holding a list of "
                           f"{pg.size()} tensors)")
    outs = _tensor_list(pg, output_tensors[0], "allgather")
    return _timed(pg._cpp_allgather(outs, inp), _timeout_of(opts))


def _start_allgather_coalesced(pg, output_lists, input_list, op="allgather_coalesced"):
    """(work, finish): one all-gather of the inputs flattened into one buffer; finish() copies every
    rank's pieces into output_lists (rank-major) and returns them, a list of lists like output_lists.
    The checks and their messages are those of torch's ProcessGroupGloo::allgather_coalesced."""
    inputs = _tensor_list(pg, input_list, op)
    if not isinstance(output_lists, (list, tuple)) or len(output_lists) != pg.size():
        raise RuntimeError(f"{_label(pg)}::{op}: output lists should be equal to world size")
    outs = [_tensor_list(pg, o, op) for o in output_lists]
    if not inputs:
        raise RuntimeError(f"{_label(pg)}::{op}: requires non-empty input tensor list")
    for row in outs:
        if len(row) != len(inputs):
            raise RuntimeError(f"{_label(pg)}::{op}: invalid output size: (expected length {len(inputs)}, got "
                               f"{len(row)})")
        for i, (o, t) in enumerate(zip(row, inputs)):
            if tuple(o.shape) != tuple(t.shape):
                raise RuntimeError(f"{_label(pg)}::{op}: invalid size of output tensor at index {i} (expected length "
                                   f"({', '.join(map(str, t.shape))}), got ({', '.join(map(str, o.shape))}))")
            if o.dtype != t.dtype:
                raise RuntimeError(f"{_label(pg)}::{op}: invalid tensor type at index {i} (expected {t.type()}, got "
                                   f"{o.type()})")
    flat = _C._ops.cat([t.reshape(-1) for t in inputs])
    gathered = _C._ops.empty([pg.size(), flat.numel()], dtype=flat.dtype, device=flat.device)
    work = pg._cpp_allgather_into_tensor(gathered, flat)

    def finish():
        for r, row in enumerate(outs):
            at = 0
            for o in row:
                o.copy_(gathered[r, at:at + o.numel()].reshape(o.shape))
                at += o.numel()
        return [list(row) for row in outs]
    return work, finish


def allgather_coalesced(pg, output_lists, input_list, opts=None):
    """Gather a list of tensors from every rank in one exchange (blocks until the outputs are filled)."""
    opts = _opts(pg, opts, AllgatherOptions, "allgather_coalesced")
    work, finish = _start_allgather_coalesced(pg, output_lists, input_list)
    work.wait(_timeout_of(opts))
    finish()
    return work


def all_gather_single(pg, output, input, opts=None):
    """Gather every rank's tensor into one output tensor (concatenated or stacked along dim 0)."""
    opts = _opts(pg, opts, AllgatherOptions, "all_gather_single")
    return _timed(pg._cpp_allgather_into_tensor(output, input), _timeout_of(opts))


def _allgather_base(pg, output, input, opts=None):
    """torch's older name of all_gather_single."""
    return all_gather_single(pg, output, input, opts)


def _root_list(pg, nested, root, op, what):
    """gather's outputs / scatter's inputs in the list-and-options form: on the root, the tensors of the one
    list `nested` holds; elsewhere `nested` must be empty."""
    if pg.rank() == root:
        if not isinstance(nested, (list, tuple)) or len(nested) != 1:
            raise RuntimeError(f"{_label(pg)}::{op}: requires a single-element {what} list on the root (holding a "
                               f"list of {pg.size()} tensors)")
        return _tensor_list(pg, nested[0], op)
    if nested:
        raise RuntimeError(f"{_label(pg)}::{op}: requires empty {what} on non-root")
    return []


def gather(pg, output_tensors, input_tensors, opts=None, timeout=None):
    """Collect every rank's tensor on the root: ([outputs], input, root) or ([[outputs]], [input], GatherOptions)."""
    if isinstance(input_tensors, _Tensor):  # gather(outputs, input, root, timeout=None)
        if opts is None:
            raise TypeError(f"{_label(pg)}::gather(outputs, input, root): the root rank is required")
        return _timed(pg._cpp_gather(_tensor_list(pg, output_tensors, "gather"), input_tensors, opts), timeout)
    opts = _opts(pg, opts, GatherOptions, "gather")
    inp = _single(pg, input_tensors, "gather", "input tensor")
    _check_root(pg, opts.rootRank, "gather")
    outs = _root_list(pg, output_tensors, opts.rootRank, "gather", "output")
    return _timed(pg._cpp_gather(outs, inp, opts.rootRank), _timeout_of(opts))


def scatter(pg, output_tensors, input_tensors, opts=None, timeout=None):
    """Send one tensor to each rank from the root: (output, [inputs], root) or ([output], [[inputs]], opts)."""
    if isinstance(output_tensors, _Tensor):  # scatter(output, inputs, root, timeout=None)
        if opts is None:
            raise TypeError(f"{_label(pg)}::scatter(output, inputs, root): the root rank is required")
        return _timed(pg._cpp_scatter(output_tensors, _tensor_list(pg, input_tensors or [], "scatter"), opts),
                      timeout)
    opts = _opts(pg, opts, ScatterOptions, "scatter")
    out = _single(pg, output_tensors, "scatter", "output tensor")
    _check_root(pg, opts.rootRank, "scatter")
    ins = _root_list(pg, input_tensors, opts.rootRank, "scatter", "input")
    return _timed(pg._cpp_scatter(out, ins, opts.rootRank), _timeout_of(opts))


def reduce_scatter(pg, output_tensors, input_tensors, opts=None, timeout=None):
    """Reduce a list across ranks, rank i receiving piece i: (output, [inputs], op) or ([output], [[inputs]], opts)."""
    if isinstance(output_tensors, _Tensor):  # reduce_scatter(output, inputs, op=SUM, timeout=None)
        op = ReduceOp.SUM if opts is None else _as_reduce_op(opts)
        out, ins = output_tensors, _tensor_list(pg, input_tensors, "reduce_scatter")
    else:
        opts = _opts(pg, opts, ReduceScatterOptions, "reduce_scatter")
        op, timeout = opts.reduceOp, _timeout_of(opts)
        out = _single(pg, output_tensors, "reduce_scatter", "output tensor")
        if not isinstance(input_tensors, (list, tuple)) or len(input_tensors) != 1:
            raise RuntimeError(f"{_label(pg)}::reduce_scatter: requires a single-element input list (holding a list "
                               f"of {pg.size()} tensors)")
        ins = _tensor_list(pg, input_tensors[0], "reduce_scatter")
    if len(ins) != pg.size():
        raise RuntimeError(f"{_label(pg)}::reduce_scatter: requires {pg.size()} input tensors, got {len(ins)}")
    for t in ins:
        if t.numel() != out.numel() or t.dtype != out.dtype:
            raise RuntimeError(f"{_label(pg)}::reduce_scatter: every input must have the output's size and dtype "
                               f"({tuple(out.shape)} {out.dtype}), got {tuple(t.shape)} {t.dtype}")
    flat = _C._ops.cat([t.reshape(-1) for t in ins])
    return _timed(pg._cpp_reduce_scatter_tensor(out, flat, op), timeout)


def reduce_scatter_single(pg, output, input, opts=None):
    """Reduce one tensor across ranks, rank i receiving slice i of dim 0 (concatenated or stacked input)."""
    opts = _opts(pg, opts, ReduceScatterOptions, "reduce_scatter_single")
    return _timed(pg._cpp_reduce_scatter_tensor(output, input, opts.reduceOp), _timeout_of(opts))


def _reduce_scatter_base(pg, output, input, opts=None):
    """torch's older name of reduce_scatter_single."""
    return reduce_scatter_single(pg, output, input, opts)


def alltoall(pg, output_tensors, input_tensors, opts=None):
    """Send input i to rank i and receive output j from rank j (blocks until the outputs are filled)."""
    opts = _opts(pg, opts, AllToAllOptions, "alltoall")
    outs = _tensor_list(pg, output_tensors, "alltoall")
    ins = _tensor_list(pg, input_tensors, "alltoall")
    if len(outs) != pg.size() or len(ins) != pg.size():
        raise RuntimeError(f"{_label(pg)}::alltoall: requires {pg.size()} output and input tensors, got "
                           f"{len(outs)} and {len(ins)}")
    flat_in = _C._ops.cat([t.reshape(-1) for t in ins])
    flat_out = _C._ops.cat([t.reshape(-1) for t in outs])
    work = pg._cpp_alltoall_single(flat_out, flat_in, [t.numel() for t in outs], [t.numel() for t in ins])
    work.wait(_timeout_of(opts))
    at = 0
    for t in outs:
        t.copy_(flat_out[at:at + t.numel()].reshape(t.shape))
        at += t.numel()
    return work


def alltoall_base(pg, output, input, output_split_sizes, input_split_sizes, opts=None):
    """All-to-all on one tensor split along dim 0 (empty split lists: equal splits)."""
    timeout = opts if isinstance(opts, datetime.timedelta) else _timeout_of(_opts(pg, opts, AllToAllOptions,
                                                                                   "alltoall_base"))
    return _timed(pg._cpp_alltoall_single(output, input, list(output_split_sizes or []),
                                          list(input_split_sizes or [])), timeout)


def barrier(pg, opts=None):
    """A work that completes once every rank of the group has called barrier."""
    opts = _opts(pg, opts, BarrierOptions, "barrier")
    return _timed(pg._cpp_barrier(), _timeout_of(opts))


def monitored_barrier(pg, timeout=None, wait_all_ranks=False):
    """Barrier that raises when it does not complete within `timeout` (default: the group's)."""
    if timeout is not None and timeout < datetime.timedelta(0):
        timeout = None
    pg._cpp_barrier().wait(timeout)


def send(pg, tensors, dstRank, tag=0):
    """Start sending a tensor ([tensor] or tensor) to group rank dstRank."""
    t = tensors if isinstance(tensors, _Tensor) else _single(pg, tensors, "send")
    return pg._cpp_send(t, dstRank, tag)


def recv(pg, tensors, srcRank, tag=0):
    """Start receiving a tensor ([tensor] or tensor) from group rank srcRank."""
    t = tensors if isinstance(tensors, _Tensor) else _single(pg, tensors, "recv")
    return pg._cpp_recv(t, srcRank, tag)


def recv_anysource(pg, tensors, tag=0):
    """Start receiving a tensor from whichever rank sends first (work.source_rank() names it)."""
    t = tensors if isinstance(tensors, _Tensor) else _single(pg, tensors, "recv_anysource")
    return pg._cpp_recv(t, -1, tag)


_METHODS = (allreduce, allreduce_coalesced, broadcast, reduce, allgather, allgather_coalesced, all_gather_single,
            _allgather_base, gather, scatter, reduce_scatter, reduce_scatter_single, _reduce_scatter_base, alltoall,
            alltoall_base, barrier, monitored_barrier, send, recv, recv_anysource)
# the C++ methods these replace on ProcessGroup, kept as _cpp_<name>
_CPP_NAMES = ("allreduce", "allreduce_coalesced", "broadcast", "reduce", "allgather", "allgather_into_tensor", "gather",
              "scatter", "reduce_scatter_tensor", "alltoall_single", "barrier", "send", "recv")


def _install():
    for name in _CPP_NAMES:
        if not hasattr(ProcessGroup, "_cpp_" + name):  # once per process, even if this module is reloaded
            setattr(ProcessGroup, "_cpp_" + name, getattr(ProcessGroup, name))
    for fn in _METHODS:
        setattr(ProcessGroup, fn.__name__, fn)


_install()


# ------------------------------------------------------------------ ProcessGroupGloo
def _interface_address(interface):
    """The IPv4 address of a network interface (what Gloo binds to for GLOO_SOCKET_IFNAME)."""
    import fcntl
    import struct
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", interface.encode()[:15]))  # SIOCGIFADDR
        except OSError:
            raise RuntimeError(f"ProcessGroupGloo.create_device: unable to find address for: {interface}") from None
    return socket.inet_ntoa(packed[20:24])


def _bindable(host):
    """host resolved to an address of this machine (one a socket can bind), or None."""
    try:
        addr = socket.gethostbyname(host)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((addr, 0))
        return addr
    except OSError:
        return None


class _Device:
    """A network address Gloo listens on (ProcessGroupGloo.create_device)."""
    __slots__ = ("hostname", "interface")

    def __init__(self, hostname, interface=""):
        self.hostname, self.interface = hostname, interface

    def __repr__(self):
        where = f"interface={self.interface!r}, " if self.interface else ""
        return f"ProcessGroupGloo.Device({where}hostname={self.hostname!r})"


class _BackendOptions:
    """Options of a process-group backend: its name, timeout, global ranks and group name."""

    def __init__(self, backend, timeout=_DEFAULT_TIMEOUT):
        self.backend = str(backend)
        self._timeout = _as_timedelta(timeout)
        self.global_ranks_in_group = []
        self.group_name = ""

    def __repr__(self):
        return f"{type(self).__qualname__}(backend={self.backend!r}, timeout={self._timeout})"


class _GlooOptions(_BackendOptions):
    """ProcessGroupGloo's options: timeout (_timeout), the device to listen on (_devices: at most one
    here) and _threads (kept for torch's API: an Ember group runs its collectives on one thread)."""

    def __init__(self):
        super().__init__("gloo")
        self._devices = []
        self._threads = 2


class ProcessGroupGloo:
    """A Gloo process group made directly from a store: ProcessGroupGloo(store, rank, size, timeout or
    options). Its methods are the low-level ones of torch's backend (allreduce([t], opts).wait(), ...)."""

    Device = _Device
    Options = _BackendOptions
    _Options = _GlooOptions

    def __init__(self, store, rank, size, timeout=_DEFAULT_TIMEOUT, options=None):
        if isinstance(timeout, _BackendOptions):
            options = timeout
        if options is None:
            options = _GlooOptions()
            options._timeout = _as_timedelta(timeout)
        devices = list(getattr(options, "_devices", []) or [])
        if len(devices) > 1:
            raise ValueError(f"ProcessGroupGloo: Ember's Gloo groups listen on one device, got {len(devices)}")
        if devices and not isinstance(devices[0], _Device):
            raise TypeError(f"ProcessGroupGloo: devices come from ProcessGroupGloo.create_device, got "
                            f"{type(devices[0]).__name__}")
        if not 0 <= rank < size:
            raise ValueError(f"ProcessGroupGloo: rank {rank} is not in [0, {size})")
        if options._timeout < datetime.timedelta(0):
            raise ValueError(f"ProcessGroupGloo: timeout must be non-negative, got {options._timeout}")
        self._options = options
        self._pg = _D.new_gloo_group(store, rank, size, options._timeout, devices[0].hostname if devices else "")

    @staticmethod
    def create_device(hostname="", interface="", lazy_init=None):
        """A device listening on `interface`'s address or `hostname` (which must be this machine's)."""
        if interface:
            return _Device(_interface_address(interface), interface)
        if hostname:
            if _bindable(hostname) is None:
                raise RuntimeError(f"ProcessGroupGloo.create_device: cannot resolve {hostname} to a (local) address")
            return _Device(hostname)
        return ProcessGroupGloo.create_default_device(lazy_init)

    @staticmethod
    def create_default_device(lazy_init=None):
        """GLOO_SOCKET_IFNAME's interface when set, else this machine's host name, else loopback."""
        import os
        iface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
        if iface:
            return _Device(_interface_address(iface), iface)
        host = socket.gethostname()
        return _Device(host if _bindable(host) else "127.0.0.1")

    @property
    def options(self):
        """The options the group was made with."""
        return self._options

    def rank(self):
        """This process's rank in the group."""
        return self._pg.rank()

    def size(self):
        """Number of processes in the group."""
        return self._pg.size()

    def name(self):
        """The backend's name: "gloo"."""
        return self._pg.name()

    def _get_backend_name(self):
        return self._pg.name()

    def __repr__(self):
        return f"<ProcessGroupGloo rank {self.rank()} of {self.size()}>"


def _delegate(fn):
    def method(self, *args, **kwargs):
        return fn(self._pg, *args, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _fn in _METHODS:
    setattr(ProcessGroupGloo, _fn.__name__, _delegate(_fn))
del _fn

for _cls in (AllreduceOptions, AllreduceCoalescedOptions, BroadcastOptions, ReduceOptions, AllgatherOptions,
             GatherOptions, ScatterOptions, ReduceScatterOptions, AllToAllOptions, BarrierOptions, ProcessGroupGloo):
    _cls.__module__ = _MODULE
del _cls
_Device.__qualname__, _BackendOptions.__qualname__, _GlooOptions.__qualname__ = (
    "ProcessGroupGloo.Device", "ProcessGroupGloo.Options", "ProcessGroupGloo._Options")
