"""Profiler results: FunctionEvent (one recorded range), FunctionEventAvg (a key_averages row),
EventList (table, chrome trace) built from what the C++ profiler hands back."""
import gzip
import json
import os
import socket
import warnings
from collections import OrderedDict, namedtuple
from enum import IntEnum

__all__ = ["Interval", "Kernel", "DeviceType", "FunctionEvent", "FunctionEventAvg", "EventList"]

# event kinds as csrc/ember/profiler/profiler.h numbers them (host ranges, then device activity)
_KIND_OP, _KIND_USER, _KIND_BACKWARD = 0, 1, 2
_DEVICE_KERNEL, _DEVICE_MEMCPY, _DEVICE_MEMSET = 0, 1, 2
_DEVICE_CATEGORY = {_DEVICE_KERNEL: "kernel", _DEVICE_MEMCPY: "gpu_memcpy", _DEVICE_MEMSET: "gpu_memset"}
_MEMORY_NAME = "[memory]"


class DeviceType(IntEnum):
    """Where an event ran (PyTorch's torch.autograd.DeviceType; the values are c10's)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20

    def __str__(self):
        return f"DeviceType.{self.name}"


# one piece of device work a host op launched: duration in microseconds
Kernel = namedtuple("Kernel", ["name", "device", "duration"])


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


def _deprecated_cuda(name):
    def get(self):
        warnings.warn(f"`{name}` is deprecated. Use `{name.replace('cuda', 'device')}` instead.", FutureWarning,
                      stacklevel=2)
        return getattr(self, name.replace("cuda", "device"))

    return property(get)


class _Times:
    """The averaged and formatted times both event kinds show (needs count, cpu_time_total,
    self_cpu_time_total, device_time_total, self_device_time_total)."""

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self):
        return self.device_time_total / max(self.count, 1)

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))
    cuda_time = _deprecated_cuda("cuda_time")
    cuda_time_total = _deprecated_cuda("cuda_time_total")
    self_cuda_time_total = _deprecated_cuda("self_cuda_time_total")


class FunctionEvent(_Times):
    """One recorded range: an op, an autograd node, a record_function range, an allocation outside
    every range ([memory]), or device work (a kernel, copy or fill: device_type CUDA, `thread` its
    stream). Times are in microseconds from the start of the profile."""

    def __init__(self, id, name, thread, start_us, end_us, kind=_KIND_OP, input_shapes=None, input_types=None,
                 stack=None, sequence_nr=-1, fwd_thread=None, self_cpu_memory_usage=0, alloc_bytes=0, freed_bytes=0,
                 device_type=DeviceType.CPU, device_index=0, use_device=None, correlation=0):
        self.id = id
        self.name = name
        self.key = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.kind = kind
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.stack = stack if stack is not None else []
        self.sequence_nr = sequence_nr
        self.fwd_thread = fwd_thread
        self.self_cpu_memory_usage = self_cpu_memory_usage
        self.cpu_memory_usage = self_cpu_memory_usage  # + the children's, filled in by EventList
        self.alloc_bytes = alloc_bytes
        self.freed_bytes = freed_bytes
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1
        self.device_type = device_type
        self.device_index = device_index
        self.use_device = use_device  # "cuda" when the profile recorded the GPU
        self.is_legacy = False
        self.is_async = False
        self.kernels = []  # device work this op launched itself (Kernel tuples)
        self.correlation = correlation  # host: the id its device work names; device: the launching op's
        self.linked = None  # device: the host event that launched it
        self.extra = {}  # device: grid/block/bytes for the trace

    def append_kernel(self, name, device, duration):
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    @property
    def is_user_annotation(self):
        return self.kind == _KIND_USER and self.device_type == DeviceType.CPU

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us() if self.device_type == DeviceType.CPU else 0

    @property
    def self_cpu_time_total(self):
        if self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        # a host op: the device work it launched and the work its children launched
        if not self.use_device or self.is_async:
            return 0
        if self.device_type == DeviceType.CPU:
            return sum(k.duration for k in self.kernels) + sum(c.device_time_total for c in self.cpu_children)
        return self.time_range.elapsed_us()

    @property
    def self_device_time_total(self):
        if not self.use_device or self.is_async:
            return 0
        if self.device_type == DeviceType.CPU:
            return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)
        return self.device_time_total


    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={_format_time(self.cpu_time_total)} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"input_shapes={self.input_shapes} sequence_nr={self.sequence_nr} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The sum of the events sharing a key (name, and input shapes / stack when grouped by them)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.device_type = DeviceType.CPU
        self.use_device = None
        self.is_legacy = False
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.node_id = 0
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
            self.device_type = other.device_type
            self.use_device = other.use_device
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    def __iadd__(self, other):
        return self.add(other)


    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} self_device_time={_format_time(self.self_device_time_total)} "
                f"device_time={_format_time(self.device_time)} count={self.count} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of FunctionEvents (ordered by start time) with table / trace / averaging helpers."""

    def __init__(self, *args, memory_records=(), pid=0, base_us=0.0, profile_memory=False, record_shapes=False,
                 base_time_ns=0):
        super().__init__(*args)
        self._memory_records = list(memory_records)
        self._pid = pid
        self._base_us = base_us  # steady-clock time (us) of time 0, for the trace's timestamps
        self._base_time_ns = base_time_ns  # steady clock + this = Unix time (ns)
        self._profile_memory = profile_memory
        self._record_shapes = record_shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0):
        groups = OrderedDict()
        for e in self:
            key = (e.key, int(e.device_type), e.is_user_annotation)  # a kernel never merges with a host range
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(e.stack[:group_by_stack_n])
            groups.setdefault(key, FunctionEventAvg()).add(e)
        out = EventList(groups.values(), profile_memory=self._profile_memory, record_shapes=self._record_shapes)
        out._grouped_by_shapes = group_by_input_shapes
        out._stack_n = group_by_stack_n
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only)

    def __str__(self):
        return self.table()

    # ------------------------------------------------------------ Chrome trace
    def _trace_events(self):
        pid = self._pid
        evs = [{"ph": "M", "name": "process_name", "ts": self._base_us, "pid": pid, "tid": 0,
                "args": {"name": "python3"}},
               {"ph": "M", "name": "process_labels", "ts": self._base_us, "pid": pid, "tid": 0,
                "args": {"labels": "CPU"}}]
        host = [e for e in self if e.device_type == DeviceType.CPU]
        device = [e for e in self if e.device_type != DeviceType.CPU]
        for tid in sorted({e.thread for e in host} | {m[0] for m in self._memory_records}):
            evs.append({"ph": "M", "name": "thread_name", "ts": self._base_us, "pid": pid, "tid": tid,
                        "args": {"name": f"thread {tid}"}})
            evs.append({"ph": "M", "name": "thread_sort_index", "ts": self._base_us, "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
        # a flow arrow from the forward op that made each autograd node to the node's backward run:
        # the innermost forward op holding the sequence number starts it
        flow_src = {}
        for e in host:
            if e.kind == _KIND_OP and e.sequence_nr >= 0:
                flow_src[e.sequence_nr] = e
        flow_dst = {e.sequence_nr: e for e in host
                    if e.kind == _KIND_BACKWARD and e.sequence_nr >= 0 and not e.name.startswith("autograd::engine")}
        launched = {}  # host event id -> the device events it launched
        for d in device:
            if d.linked is not None:
                launched.setdefault(d.linked.id, []).append(d)
        for idx, e in enumerate(self):
            if e.name == _MEMORY_NAME or e.device_type != DeviceType.CPU:
                continue
            args = {"External id": e.id}
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
                args["Fwd thread id"] = e.fwd_thread if e.fwd_thread is not None else 0
            if self._record_shapes and (e.kind == _KIND_OP or e.input_shapes):
                args["Input type"] = list(e.input_types)
                args["Input Dims"] = [list(s) for s in e.input_shapes]
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            args["Ev Idx"] = idx
            evs.append({"ph": "X", "cat": "user_annotation" if e.kind == _KIND_USER else "cpu_op", "name": e.name,
                        "pid": pid, "tid": e.thread, "ts": round(self._base_us + e.time_range.start, 3),
                        "dur": round(e.time_range.elapsed_us(), 3), "args": args})
            if e.sequence_nr in flow_dst and flow_src.get(e.sequence_nr) is e:
                evs.append({"ph": "s", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                            "ts": round(self._base_us + e.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd"})
            if e.kind == _KIND_BACKWARD and flow_dst.get(e.sequence_nr) is e and e.sequence_nr in flow_src:
                evs.append({"ph": "f", "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                            "ts": round(self._base_us + e.time_range.start, 3), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
            for d in launched.get(e.id, ()):  # an arrow from the op to each piece of device work it launched
                evs.append({"ph": "s", "id": d.id, "pid": pid, "tid": e.thread,
                            "ts": round(self._base_us + e.time_range.start, 3), "cat": "ac2g", "name": "ac2g"})
        evs += self._device_trace_events(device)
        for tid, ts, nbytes, total, addr in self._memory_records:
            evs.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": _MEMORY_NAME, "pid": pid, "tid": tid,
                        "ts": round(self._base_us + ts, 3),
                        "args": {"Total Reserved": total, "Total Allocated": total, "Bytes": nbytes,
                                 "Device Id": -1, "Device Type": 0, "Addr": addr}})
        return evs

    def _device_trace_events(self, device):
        """Device work (the events of `device`) on its own process per GPU (pid = the device index) and a
        row per stream."""
        evs = []
        for dev in sorted({e.device_index for e in device}):
            evs.append({"ph": "M", "name": "process_name", "ts": self._base_us, "pid": dev, "tid": 0,
                        "args": {"name": f"GPU {dev}"}})
            evs.append({"ph": "M", "name": "process_sort_index", "ts": self._base_us, "pid": dev, "tid": 0,
                        "args": {"sort_index": 5000000 + dev}})
        for dev, stream in sorted({(e.device_index, e.thread) for e in device}):
            evs.append({"ph": "M", "name": "thread_name", "ts": self._base_us, "pid": dev, "tid": stream,
                        "args": {"name": f"stream {stream}"}})
        for e in device:
            ts = round(self._base_us + e.time_range.start, 3)
            args = {"device": e.device_index, "stream": e.thread, "correlation": e.correlation}
            if e.linked is not None:
                args["External id"] = e.linked.id
            args.update(e.extra)
            evs.append({"ph": "X", "cat": _DEVICE_CATEGORY.get(e.kind, "kernel"), "name": e.name, "pid": e.device_index,
                        "tid": e.thread, "ts": ts, "dur": round(e.time_range.elapsed_us(), 3), "args": args})
            if e.linked is not None:
                evs.append({"ph": "f", "id": e.id, "pid": e.device_index, "tid": e.thread, "ts": ts,
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        return evs

    def export_chrome_trace(self, path):
        """Writes the events as Chrome trace JSON (chrome://tracing, Perfetto); .gz paths are gzipped."""
        doc = {"schemaVersion": 1, "deviceProperties": [], "host_name": socket.gethostname(),
               "profile_memory": int(self._profile_memory), "record_shapes": int(self._record_shapes),
               "displayTimeUnit": "ms", "baseTimeNanoseconds": self._base_time_ns, "traceEvents": self._trace_events(), "traceName": os.fspath(path)}
        opener = gzip.open if os.fspath(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(doc, f)
        return path

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Flame-graph input: one line per distinct Python stack, `outer;...;inner;op value`."""
        totals = OrderedDict()
        for e in self:
            if not e.stack:
                continue
            key = ";".join(list(reversed(e.stack)) + [e.name])
            totals[key] = totals.get(key, 0) + getattr(e, metric)
        with open(path, "w") as f:
            for key, v in totals.items():
                f.write(f"{key} {int(v)}\n")


def build_event_list(raw, record_shapes=False, profile_memory=False, use_device=None, keep_host=True):
    """FunctionEvents from _C._profiler_stop()'s dict (see csrc/python/profiler_bindings.cpp)."""
    start_ns = raw["start_ns"]
    events, mem_records = [], []
    use_device = use_device if use_device and not raw.get("device_warning") else None
    by_correlation = {}  # a host range's correlation id -> its event
    fwd_threads = {}  # sequence number -> the thread whose forward op made the node
    next_id = 0
    for tid, raw_events, raw_memory in raw["threads"]:
        built = []
        for (name, kind, s, e, seq, parent, alloc, freed, shapes, dtypes, stack, corr) in raw_events:
            ev = FunctionEvent(next_id, name, tid, (s - start_ns) / 1e3, (e - start_ns) / 1e3, kind=kind,
                               input_shapes=shapes, input_types=dtypes, stack=stack, sequence_nr=seq,
                               self_cpu_memory_usage=alloc - freed, alloc_bytes=alloc, freed_bytes=freed,
                               use_device=use_device, correlation=corr)
            if corr:
                by_correlation[corr] = ev
            next_id += 1
            if parent >= 0:
                ev.set_cpu_parent(built[parent])
                built[parent].append_cpu_child(ev)
            if kind == _KIND_OP and seq >= 0:
                ev.fwd_thread = tid
                fwd_threads.setdefault(seq, tid)
            built.append(ev)
        for ev in reversed(built):  # children come after their parent
            if ev.cpu_parent is not None:
                ev.cpu_parent.cpu_memory_usage += ev.cpu_memory_usage
        for ts, nbytes, total, addr, owner in raw_memory:
            ts_us = (ts - start_ns) / 1e3
            mem_records.append((tid, ts_us, nbytes, total, addr))
            if owner < 0:  # outside every range: its own row, as PyTorch shows it
                built.append(FunctionEvent(next_id, _MEMORY_NAME, tid, ts_us, ts_us, kind=_KIND_OP,
                                           self_cpu_memory_usage=nbytes,
                                           alloc_bytes=max(nbytes, 0), freed_bytes=max(-nbytes, 0)))
                next_id += 1
        events += built
    for ev in events:
        if ev.kind == _KIND_BACKWARD and ev.sequence_nr >= 0:
            ev.fwd_thread = fwd_threads.get(ev.sequence_nr)
    if not keep_host:  # ProfilerActivity.CUDA without CPU: the device's work alone
        events = []
    for (name, kind, s, e, dev, stream, corr, nbytes, grid, block) in raw.get("device_events", ()):
        ev = FunctionEvent(next_id, name, stream, (s - start_ns) / 1e3, (e - start_ns) / 1e3, kind=kind,
                           device_type=DeviceType.CUDA, device_index=dev, use_device=use_device, correlation=corr)
        next_id += 1
        ev.extra = {"grid": list(grid), "block": list(block)} if kind == _DEVICE_KERNEL else {"bytes": nbytes}
        launcher = by_correlation.get(corr)
        if launcher is not None:  # the innermost range open at the launch owns the work
            ev.linked = launcher
            launcher.append_kernel(name, dev, ev.time_range.elapsed_us())
        events.append(ev)
    events.sort(key=lambda ev: (ev.time_range.start, -ev.time_range.end, ev.id))
    # trace timestamps stay on the steady clock: epoch microseconds (~1.8e15) would lose sub-microsecond
    # precision in a double; baseTimeNanoseconds in the trace converts them to Unix time
    return EventList(events, memory_records=mem_records, pid=raw["pid"], base_us=start_ns / 1e3,
                     profile_memory=profile_memory, record_shapes=record_shapes,
                     base_time_ns=raw["epoch_offset_ns"])


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
              "count", "device_time", "device_time_total", "self_device_time_total")


def _build_table(events, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
                 max_shapes_column_width=80, header=None, top_level_events_only=False):
    """PyTorch's profiler table: right-aligned columns two spaces apart, the footer with the total."""
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        sort_by = sort_by.replace("cuda", "device")  # cuda_time_total and the like: the device's names
        if sort_by not in _SORT_KEYS and not all(hasattr(e, sort_by) for e in rows):
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
        rows = sorted(rows, key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    if isinstance(rows[0], FunctionEventAvg):  # averages show shapes only when grouped by them
        has_shapes = getattr(events, "_grouped_by_shapes", False)
    else:
        has_shapes = any(e.input_shapes for e in events)
    stack_n = getattr(events, "_stack_n", 0)
    has_memory = events._profile_memory or any(e.cpu_memory_usage for e in rows)

    name_w = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    cols = [("Name", name_w, lambda e: e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "...")]
    total = sum(e.self_cpu_time_total for e in events)
    w = 12
    cols += [("Self CPU %", w, lambda e: _format_time_share(e.self_cpu_time_total, total)),
             ("Self CPU", w, lambda e: _format_time(e.self_cpu_time_total)),
             ("CPU total %", w, lambda e: _format_time_share(e.cpu_time_total, total)),
             ("CPU total", w, lambda e: _format_time(e.cpu_time_total)),
             ("CPU time avg", w, lambda e: _format_time(e.cpu_time))]
    # the device columns only when the device did something (as PyTorch's table)
    use_device = next((e.use_device for e in events if e.use_device), None)
    if not any(e.self_device_time_total > 0 for e in events):
        use_device = None
    device_total = sum(e.self_device_time_total for e in events if e.device_type != DeviceType.CPU)
    if use_device:
        dev = use_device.upper()
        cols += [(f"Self {dev}", w, lambda e: _format_time(e.self_device_time_total)),
                 (f"Self {dev} %", w, lambda e: _format_time_share(e.self_device_time_total, device_total)),
                 (f"{dev} total", w, lambda e: _format_time(e.device_time_total)),
                 (f"{dev} time avg", w, lambda e: _format_time(e.device_time))]
    if has_memory:
        cols += [("CPU Mem", w, lambda e: _format_memory(e.cpu_memory_usage)),
                 ("Self CPU Mem", w, lambda e: _format_memory(e.self_cpu_memory_usage))]
    cols.append(("# of Calls", w, lambda e: str(e.count)))
    if has_shapes:
        shapes_w = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width)
        cols.append(("Input Shapes", shapes_w, lambda e: str(e.input_shapes)[:shapes_w]))
    if stack_n > 0:
        src_w = min(max((len(s) for e in events for s in (e.stack or [])), default=0) + 4, max_src_column_width)
        cols.append(("Source Location", src_w, None))

    sep = "".join("-" * cw + "  " for _, cw, _ in cols)
    lines = []
    if header is not None:
        lines += ["=" * (len(sep) - 2), header]
    lines += [sep, "".join(f"{title:>{cw}}  " for title, cw, _ in cols), sep]
    for e in rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows:
        cells = []
        for title, cw, fmt in cols:
            if fmt is None:  # source location: the first stack frame on this line, more below
                cells.append(f"{(e.stack[0] if e.stack else ''):<{cw}}"[:cw] + "  ")
            else:
                cells.append(f"{fmt(e):>{cw}}  ")
        lines.append("".join(cells))
        if stack_n > 0 and e.stack:
            pad = "".join(" " * cw + "  " for _, cw, _ in cols[:-1])
            for frame in e.stack[1:stack_n]:
                lines.append(pad + frame[:cols[-1][1]])
    lines.append(sep)
    lines.append(f"Self CPU time total: {_format_time(total)}")
    if use_device:
        lines.append(f"Self {use_device.upper()} time total: {_format_time(device_total)}")
    return "\n".join(lines) + "\n"
